#!/usr/bin/env python3
"""Prints a ResNet-50 deploy prototxt in the form of Kaiming He's published one (one Input of
1x3x224x224; each convolution followed by a BatchNorm with use_global_stats: true and a Scale
with a bias; bottlenecks res2a..res5c with a projection branch1 first in each stage, the stride
on branch2a; ave pooling, fc1000 and a Softmax), every convolution written without a bias."""


def layer(name, kind, bottoms, top, params=""):
    lines = [f'layer {{\n  name: "{name}"\n  type: "{kind}"']
    lines += [f'  bottom: "{b}"' for b in bottoms]
    lines.append(f'  top: "{top}"')
    if params:
        lines.append("  " + params)
    return "\n".join(lines) + "\n}\n"


def conv_bn(name, bottom, outputs, kernel, stride, pad, suffix, relu):
    out = layer(name, "Convolution", [bottom], name,
                f"convolution_param {{ num_output: {outputs} kernel_size: {kernel} "
                f"pad: {pad} stride: {stride} bias_term: false }}")
    out += layer("bn" + suffix, "BatchNorm", [name], name,
                 "batch_norm_param { use_global_stats: true }")
    out += layer("scale" + suffix, "Scale", [name], name, "scale_param { bias_term: true }")
    if relu:
        out += layer(name + "_relu", "ReLU", [name], name)
    return out


def main():
    text = 'name: "ResNet-50"\n'
    text += layer("data", "Input", [], "data",
                  "input_param { shape: { dim: 1 dim: 3 dim: 224 dim: 224 } }")
    text += conv_bn("conv1", "data", 64, 7, 2, 3, "_conv1", True)
    text += layer("pool1", "Pooling", ["conv1"], "pool1",
                  "pooling_param { kernel_size: 3 stride: 2 pool: MAX }")
    bottom = "pool1"
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)], start=2):
        for b in range(blocks):
            name = f"res{stage}{chr(ord('a') + b)}"
            stride = 2 if b == 0 and stage > 2 else 1
            if b == 0:
                text += conv_bn(f"{name}_branch1", bottom, 4 * width, 1, stride, 0,
                                f"{name[3:]}_branch1", False)
                shortcut = f"{name}_branch1"
            else:
                shortcut = bottom
            text += conv_bn(f"{name}_branch2a", bottom, width, 1, stride, 0,
                            f"{name[3:]}_branch2a", True)
            text += conv_bn(f"{name}_branch2b", f"{name}_branch2a", width, 3, 1, 1,
                            f"{name[3:]}_branch2b", True)
            text += conv_bn(f"{name}_branch2c", f"{name}_branch2b", 4 * width, 1, 1, 0,
                            f"{name[3:]}_branch2c", False)
            text += layer(name, "Eltwise", [shortcut, f"{name}_branch2c"], name)
            text += layer(name + "_relu", "ReLU", [name], name)
            bottom = name
    text += layer("pool5", "Pooling", [bottom], "pool5",
                  "pooling_param { kernel_size: 7 stride: 1 pool: AVE }")
    text += layer("fc1000", "InnerProduct", ["pool5"], "fc1000",
                  "inner_product_param { num_output: 1000 }")
    text += layer("prob", "Softmax", ["fc1000"], "prob")
    print(text, end="")


if __name__ == "__main__":
    main()
