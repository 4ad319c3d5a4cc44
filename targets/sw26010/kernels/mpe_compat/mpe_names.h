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
#define swk_conv_direct_workspace mpe_conv_direct_workspace
#define swk_conv_direct_forward mpe_conv_direct_forward
#define swk_conv_direct_backward mpe_conv_direct_backward
#define swk_to_bnrc16 mpe_to_bnrc16
#define swk_bnrc16_to_bnrc mpe_bnrc16_to_bnrc
/* conv_direct.c's own external names, kept apart from a host kernel set linked beside */
#define host_conv_direct_isa mpe_host_conv_direct_isa
#define host_conv_direct_use mpe_host_conv_direct_use
#define host_conv_direct_forward mpe_host_conv_direct_forward
#define host_conv_direct_input_gradient_legal mpe_host_conv_direct_input_gradient_legal
#define host_conv_direct_input_gradient mpe_host_conv_direct_input_gradient
#define host_conv_direct_weight_gradient mpe_host_conv_direct_weight_gradient
#define host_conv_direct_workspace mpe_host_conv_direct_workspace
#define host_to_blocked mpe_host_to_blocked
#define host_from_blocked mpe_host_from_blocked
#define swk_pool_bnrc16_forward mpe_pool_bnrc16_forward
#define swk_pool_bnrc16_backward mpe_pool_bnrc16_backward
