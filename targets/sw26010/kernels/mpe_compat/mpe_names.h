/* Force-included into the host target's portable C sources that this kernel set runs on the
 * MPE: their kernels become mpe_*, which mpe.c wraps to account for their MPE time. */
#define swk_pool_forward mpe_pool_forward
#define swk_pool_backward mpe_pool_backward
#define swk_lrn_forward mpe_lrn_forward
#define swk_lrn_backward mpe_lrn_backward
#define swk_dropout_forward mpe_dropout_forward
#define swk_dropout_backward mpe_dropout_backward
#define swk_concat_forward mpe_concat_forward
#define swk_concat_backward mpe_concat_backward
#define swk_add_forward mpe_add_forward
#define swk_add_backward mpe_add_backward
#define swk_softmax_loss_forward mpe_softmax_loss_forward
#define swk_softmax_loss_backward mpe_softmax_loss_backward
#define swk_accuracy_forward mpe_accuracy_forward
