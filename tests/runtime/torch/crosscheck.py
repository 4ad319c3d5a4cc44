#!/usr/bin/env python3
"""Cross-check of swnc against PyTorch: the network every_layer.swn, compiled by swnc, trains
3 SGD steps from its own initial weights on a CIFAR-format file of random images; PyTorch (in
float64) repeats them from the same weights (read through the checkpoint format) on the same
batches, with the same dropout masks (the counter hash, replicated in numpy). Every loss, the
last step's gradients, and every updated parameter, momentum and running statistic must agree
to a relative 1e-4 (max-norm per tensor). The same network with optimizer = lars repeats the 3
steps against LARS's update computed here (each tensor's rate scaled by its trust ratio); with
adam, and adamw with clip_gradients, against torch.optim.Adam / AdamW and
torch.nn.utils.clip_grad_norm_; and SGD with iter_size = 2 against two micro-batches of 4 whose
gradients PyTorch accumulates (each normalising its own 4 images, as Caffe's iter_size does).

usage: crosscheck.py SWNC WORKDIR"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
import swnc_checkpoint as ck  # noqa: E402
import masks  # noqa: E402

ITERATIONS, BATCH, IMAGES, SEED = 3, 8, 16, 7
TOLERANCE = 1e-4


def dropout_keep(layer_name, ratio, iteration, images, elements, first_image=0):
    return masks.dropout_keep(SEED, layer_name, ratio, iteration, images, elements, first_image)


def write_cifar(path, rng):
    labels = rng.integers(0, 5, IMAGES)
    pixels = rng.integers(0, 256, (IMAGES, 3 * 32 * 32))
    with open(path, "wb") as f:
        for l, p in zip(labels, pixels):
            f.write(bytes([l]) + bytes(p.astype(np.uint8)))
    return pixels.reshape(IMAGES, 3, 32, 32), labels


def logits(P, S, x, iteration, first_image=0, training=True):
    """every_layer.swn in PyTorch up to the scores its loss reads, updating the running
    statistics in S when training (else reading them, and no dropout)."""
    c1 = F.conv2d(x, P["c1.weight"], P["c1.bias"], stride=2, padding=1)
    bn = F.batch_norm(c1, S["bn.running_mean"], S["bn.running_var"], P["bn.scale"], P["bn.shift"],
                      training=training, momentum=1 - 0.8, eps=1e-5)
    r1 = F.relu(bn)
    ex = F.linear(F.adaptive_avg_pool2d(r1, 1).flatten(1), P["ex.weight"], P["ex.bias"])
    se = r1 * torch.sigmoid(ex)[:, :, None, None]
    p1 = F.max_pool2d(se, 3, 2, ceil_mode=True)
    c2 = F.conv2d(p1, P["c2.weight"], P["c2.bias"], padding=(2, 0), dilation=(2, 1), groups=2)
    fb = F.batch_norm(c2, S["fb.running_mean"], S["fb.running_var"], P["fb.scale"], P["fb.shift"],
                      training=False, eps=1e-5)
    n1 = F.local_response_norm(fb, 3, alpha=0.5, beta=0.75, k=2)
    a1 = torch.sigmoid(n1) + torch.tanh(n1) + F.silu(n1) + F.gelu(n1)
    dc = F.conv_transpose2d(a1, P["dc.weight"], P["dc.bias"], stride=2, padding=(2, 1),
                            dilation=(2, 1), groups=2)
    pd = F.max_pool2d(dc, 2, 2, ceil_mode=True)
    ub = F.interpolate(a1, scale_factor=2, mode="bilinear", align_corners=False)
    pb = F.max_pool2d(ub, 2, 2, ceil_mode=True)
    un = F.interpolate(p1, scale_factor=(1, 2), mode="nearest")
    pn = F.avg_pool2d(un, (1, 4), (1, 2), padding=(0, 1), ceil_mode=True, count_include_pad=True)
    cat = torch.cat([pb, F.softmax(pn, 1), pd], 1)
    p2 = F.avg_pool2d(cat, 3, 2, padding=1, ceil_mode=True, count_include_pad=True)
    d1 = p2
    if training:
        keep = dropout_keep("d1", np.float32(0.3), iteration, x.shape[0], p2[0].numel(),
                            first_image).reshape(p2.shape)
        d1 = p2 * keep.to(p2.dtype) * float(np.float32(1) / (np.float32(1) - np.float32(0.3)))
    f1 = F.linear(d1.flatten(1), P["f1.weight"], P["f1.bias"])
    h2 = F.hardsigmoid(F.hardswish(F.leaky_relu(f1, 0.1)))
    return F.linear(F.relu6(h2), P["f2.weight"], P["f2.bias"])


def forward(P, S, x, labels, iteration, first_image=0):
    """every_layer.swn in PyTorch; returns the loss, updating the running statistics in S."""
    return 1.5 * F.cross_entropy(logits(P, S, x, iteration, first_image), labels,
                                 label_smoothing=0.1)


# per-parameter (lr_mult, decay_mult), as every_layer.swn sets them
MULTS = {"c1.bias": (2, 0), "f2.weight": (0.5, 2)}


def lars_ratio(p, g, decay, trust):
    """runtime/kernels.h, swk_lars_ratio: trust |w| / (|g| + decay |w|), 1 where a norm is 0."""
    w_norm, g_norm = p.norm().item(), g.norm().item()
    return trust * w_norm / (g_norm + decay * w_norm) if w_norm > 0 and g_norm > 0 else 1.0


def reference(init, pixels, labels, trust=None):
    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in init.params.items()}
    V = {k: torch.zeros_like(p) for k, p in P.items()}
    S = {k: torch.tensor(v, dtype=torch.float64) for k, v in init.state.items()}
    mean = torch.tensor([120.0, 110.0, 100.0], dtype=torch.float64).reshape(1, 3, 1, 1)
    losses, grads = [], {}
    for it in range(ITERATIONS):
        first = (it * BATCH) % IMAGES  # no shuffling: batches in file order
        x = (torch.tensor(pixels[first:first + BATCH], dtype=torch.float64) - mean) * (1 / 128)
        y = torch.tensor(labels[first:first + BATCH], dtype=torch.long)
        loss = forward(P, S, x, y, it)
        for p in P.values():
            p.grad = None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            for k, p in P.items():
                lr_mult, decay_mult = MULTS.get(k, (1, 1))
                grads[k] = p.grad.clone()
                local = 1.0 if trust is None else lars_ratio(p, p.grad, 0.01 * decay_mult, trust)
                V[k] = 0.9 * V[k] + 0.05 * lr_mult * local * (p.grad + 0.01 * decay_mult * p)
                p -= V[k]
    return losses, grads, P, V, S


def reference_torch(init, pixels, labels, make_optimizer, clip=None, micro_batches=1):
    """ITERATIONS steps of a torch.optim optimizer (param groups with every_layer.swn's lr_mult
    and decay_mult), each on micro_batches micro-batches whose mean gradient is clipped to the
    global norm `clip` first when given. Returns the losses, parameters, optimizer and state."""
    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in init.params.items()}
    S = {k: torch.tensor(v, dtype=torch.float64) for k, v in init.state.items()}
    groups = [{"params": [p], "lr_mult": MULTS.get(k, (1, 1))[0],
               "decay_mult": MULTS.get(k, (1, 1))[1]} for k, p in P.items()]
    optimizer = make_optimizer(groups)
    mean = torch.tensor([120.0, 110.0, 100.0], dtype=torch.float64).reshape(1, 3, 1, 1)
    size, losses = BATCH // micro_batches, []
    for it in range(ITERATIONS):
        optimizer.zero_grad()
        total = 0.0
        for k in range(micro_batches):
            first = ((it * micro_batches + k) * size) % IMAGES  # file order, as the loader's
            x = (torch.tensor(pixels[first:first + size], dtype=torch.float64) - mean) * (1 / 128)
            y = torch.tensor(labels[first:first + size], dtype=torch.long)
            loss = forward(P, S, x, y, it, k * size)
            (loss / micro_batches).backward()
            total += loss.item() / micro_batches
        losses.append(total)
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(list(P.values()), clip)
        optimizer.step()
    return losses, P, optimizer, S


def group_settings(lr, decay):
    """Each param group's lr and weight decay from its multipliers."""
    def apply(groups):
        for g in groups:
            g["lr"], g["weight_decay"] = lr * g["lr_mult"], decay * g["decay_mult"]
        return groups
    return apply


def compare(what, ours, theirs, failures, scale=None):
    """Max-norm relative error; `scale` replaces the reference's own magnitude for tensors that
    are mathematically zero (a bias followed by batch norm has no gradient)."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    scale = max(np.abs(theirs).max(), scale or 0, 1e-30)
    err = np.abs(ours - theirs).max() / scale
    status = "ok" if err <= TOLERANCE else "FAIL"
    print(f"  {status:4s} {what:32s} relative error {err:.2e}")
    if err > TOLERANCE:
        failures.append(what)


def main():
    swnc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    run = lambda *args: subprocess.run(args, check=True, cwd=work, stdout=subprocess.DEVNULL)
    exe = os.path.join(work, "every_layer")
    data = os.path.join(work, "random.bin")
    pixels, labels = write_cifar(data, np.random.default_rng(3))
    run(swnc, os.path.join(HERE, "every_layer.swn"), "-o", exe)
    # the default build adds gradients into the momentum (pass fold-gradients): it trains; one
    # with a gradient pool of its own saves the last iteration's gradients
    run(swnc, os.path.join(HERE, "every_layer.swn"), "--no-fold-gradients", "-o", exe + "_pool")
    common = ["--train", data, "--test", data, "--threads", "1", "--no-shuffle"]
    run(exe, *common, "--epochs", "0", "--checkpoint", "init.ckpt")
    run(exe, *common, "--iterations", str(ITERATIONS), "--log", "log.json", "--checkpoint", "after.ckpt")
    run(exe + "_pool", *common, "--iterations", str(ITERATIONS), "--save-gradients", "grads.ckpt")
    with open(os.path.join(work, "log.json")) as f:
        ours_losses = [e["loss"] for e in map(json.loads, f) if e["event"] == "train"]
    init, after, grads = (ck.load(os.path.join(work, n)) for n in ("init.ckpt", "after.ckpt", "grads.ckpt"))
    losses, ref_grads, P, V, S = reference(init, pixels, labels)
    failures = []
    print("losses: swnc", ["%.7f" % l for l in ours_losses], "pytorch", ["%.7f" % l for l in losses])
    compare("losses", ours_losses, losses, failures)
    for k in P:
        layer_scale = max(np.abs(g.numpy()).max() for n, g in ref_grads.items() if n.split(".")[0] == k.split(".")[0])
        compare(f"gradient {k}", grads.params[k], ref_grads[k].numpy(), failures, layer_scale)
        compare(f"parameter {k}", after.params[k], P[k].detach().numpy(), failures)
        compare(f"momentum {k}", after.momentum[k], V[k].numpy(), failures, 0.05 * layer_scale)
    for k in S:
        compare(f"state {k}", after.state[k], S[k].numpy(), failures)
    compare("--infer scores", *infer_scores(run, exe, after, pixels), failures)
    # LARS, from the same initial weights
    run(swnc, os.path.join(HERE, "every_layer.swn"), "-D", "train.optimizer=lars", "-D",
        "train.trust=0.02", "-o", exe + "_lars")
    run(exe + "_lars", *common, "--iterations", str(ITERATIONS), "--init-weights", "init.ckpt",
        "--log", "lars.json", "--checkpoint", "lars.ckpt")
    with open(os.path.join(work, "lars.json")) as f:
        lars_losses = [e["loss"] for e in map(json.loads, f) if e["event"] == "train"]
    lars = ck.load(os.path.join(work, "lars.ckpt"))
    losses, _, P, V, _ = reference(init, pixels, labels, trust=0.02)
    print("lars losses: swnc", ["%.7f" % l for l in lars_losses], "pytorch", ["%.7f" % l for l in losses])
    compare("lars losses", lars_losses, losses, failures)
    # a tensor whose gradient is mathematically zero (c1's bias, before batch norm) is left out:
    # LARS divides by the gradient's norm, so its step is the direction of rounding noise
    lars_checked = [k for k in P if np.abs(ref_grads[k].numpy()).max() > 1e-9]
    for k in lars_checked:
        compare(f"lars parameter {k}", lars.params[k], P[k].detach().numpy(), failures)
        compare(f"lars momentum {k}", lars.momentum[k], V[k].numpy(), failures)
    checked = 3 + 3 * len(P) + 2 * len(lars_checked) + len(S)
    checked += check_torch_optimizers(run, swnc, exe, common, init, pixels, labels, lars_checked,
                                      failures)
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


def infer_scores(run, exe, weights, pixels):
    """--infer on 11 images (batches of 4: the last one short) after training, and PyTorch's
    evaluation-mode scores on the same weights and running statistics."""
    work = os.path.dirname(exe)
    mean = np.array([120.0, 110.0, 100.0]).reshape(1, 3, 1, 1)
    x = ((pixels[:11] - mean) / 128).astype(np.float32)
    np.save(os.path.join(work, "images.npy"), x)
    run(exe, "--infer", "images.npy", "--output", "scores.npy", "--init-weights", "after.ckpt",
        "--test-batch", "4", "--threads", "1")
    ours = np.load(os.path.join(work, "scores.npy"))
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in weights.params.items()}
    S = {k: torch.tensor(v, dtype=torch.float64) for k, v in weights.state.items()}
    with torch.no_grad():
        theirs = logits(P, S, torch.tensor(x, dtype=torch.float64), 0, training=False)
    assert ours.shape == (11, 5) and ours.dtype == np.float32, (ours.shape, ours.dtype)
    return ours, theirs.numpy()


def train_log(work, name):
    with open(os.path.join(work, name)) as f:
        return [e["loss"] for e in map(json.loads, f) if e["event"] == "train"]


def check_torch_optimizers(run, swnc, exe, common, init, pixels, labels, checked, failures):
    """adam; adamw with clipping; SGD over 2 micro-batches: each against PyTorch. Tensors whose
    gradient is mathematically zero (`checked` leaves them out) take Adam's step in the
    direction of rounding noise. Returns how many comparisons were made."""
    work = os.path.dirname(exe)
    lr, decay, clip = 0.002, 0.01, 0.5
    settings = group_settings(lr, decay)
    cases = [
        ("adam", ["-D", "train.optimizer=adam", "-D", f"train.lr={lr}"],
         lambda g: torch.optim.Adam(settings(g), lr=lr, betas=(0.9, 0.999), eps=1e-8), None, 1),
        ("adamw-clipped", ["-D", "train.optimizer=adamw", "-D", f"train.lr={lr}", "-D",
                           "train.beta1=0.8", "-D", "train.beta2=0.99", "-D", "train.epsilon=1e-6",
                           "-D", f"train.clip_gradients={clip}"],
         lambda g: torch.optim.AdamW(settings(g), lr=lr, betas=(0.8, 0.99), eps=1e-6), clip, 1),
        ("sgd-iter_size", ["-D", "train.iter_size=2"],
         lambda g: torch.optim.SGD(group_settings(0.05, decay)(g), lr=0.05, momentum=0.9), None, 2),
    ]
    count = 0
    for name, defines, make, clip_at, micro in cases:
        run(swnc, os.path.join(HERE, "every_layer.swn"), *defines, "-o", f"{exe}_{name}")
        batch = ["--batch", str(BATCH // micro)] if micro > 1 else []
        run(f"{exe}_{name}", *common, *batch, "--iterations", str(ITERATIONS), "--init-weights",
            "init.ckpt", "--log", f"{name}.json", "--checkpoint", f"{name}.ckpt")
        ours_losses, ours = train_log(work, f"{name}.json"), ck.load(os.path.join(work, f"{name}.ckpt"))
        losses, P, optimizer, S = reference_torch(init, pixels, labels, make, clip_at, micro)
        print(f"{name} losses: swnc", ["%.7f" % l for l in ours_losses], "pytorch",
              ["%.7f" % l for l in losses])
        compare(f"{name} losses", ours_losses, losses, failures)
        count += 1
        for k in checked:
            state = optimizer.state[P[k]]
            compare(f"{name} parameter {k}", ours.params[k], P[k].detach().numpy(), failures)
            # Caffe's momentum (swnc's) holds lr x PyTorch's momentum buffer
            lr_k = optimizer.param_groups[list(P).index(k)]["lr"]
            first = state["exp_avg"] if "exp_avg" in state else lr_k * state["momentum_buffer"]
            compare(f"{name} first moment {k}", ours.momentum[k], first.numpy(), failures)
            count += 2
            if "exp_avg_sq" in state:
                compare(f"{name} second moment {k}", ours.second_moment[k],
                        state["exp_avg_sq"].numpy(), failures)
                count += 1
        # Adam moves c1's bias (its gradient is mathematically zero) by rounding noise, and the
        # batch norm after it sees that in its running mean
        for k in (k for k in S if not (k == "bn.running_mean" and "adam" in name)):
            compare(f"{name} state {k}", ours.state[k], S[k].numpy(), failures)
            count += 1
    return count


if __name__ == "__main__":
    main()
