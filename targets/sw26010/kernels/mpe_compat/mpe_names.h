/* Force-included into the host target's portable C sources that this kernel set runs on the
 * MPE: their kernels become mpe_*, which mpe.c wraps to account for their MPE time. They are
 * built in plain C (targets/host/isa.h), as the chip's management core runs them: no x86 vector
 * kernels in this set, even where the emulator runs on x86. */
#define SWNC_HOST_PLAIN_C 1
#define swk_mul_forward mpe_mul_forward
#define swk_mul_backward mpe_mul_backward
#define swk_upsample_forward mpe_upsample_forward
#define swk_upsample_backward mpe_upsample_backward
#define swk_softmax_forward mpe_softmax_forward
#define swk_softmax_backward mpe_softmax_backward
#define swk_pool_forward mpe_pool_forward
#define swk_pool_backward mpe_pool_backward
#define swk_lrn_forward mpe_lrn_forward
#define swk_lrn_backward mpe_lrn_backward
#define swk_softmax_loss_forward mpe_softmax_loss_forward
#define swk_softmax_loss_backward mpe_softmax_loss_backward
#define swk_accuracy_forward mpe_accuracy_forward
#define swk_conv_direct_workspace mpe_conv_direct_workspace
#define swk_conv_direct_forward mpe_conv_direct_forward
#define swk_conv_direct_backward mpe_conv_direct_backward
#define swk_conv_winograd2_workspace mpe_conv_winograd2_workspace
#define swk_conv_winograd2_forward mpe_conv_winograd2_forward
#define swk_conv_winograd2_backward mpe_conv_winograd2_backward
#define swk_conv_winograd4_workspace mpe_conv_winograd4_workspace
#define swk_conv_winograd4_forward mpe_conv_winograd4_forward
#define swk_conv_winograd4_backward mpe_conv_winograd4_backward
#define swk_conv_depthwise_workspace mpe_conv_depthwise_workspace
#define swk_conv_depthwise_forward mpe_conv_depthwise_forward
#define swk_conv_depthwise_backward mpe_conv_depthwise_backward
#define swk_to_bnrc16 mpe_to_bnrc16
#define swk_bnrc16_to_bnrc mpe_bnrc16_to_bnrc
/* conv_direct.c's and register_blocks.c's own external names, kept apart from a host kernel
 * set linked beside */
#define host_conv_direct_use mpe_host_conv_direct_use
#define host_register_blocks mpe_host_register_blocks
#define host_direct_bias_gradient mpe_host_direct_bias_gradient
#define host_conv_direct_forward mpe_host_conv_direct_forward
#define host_conv_direct_input_gradient mpe_host_conv_direct_input_gradient
#define host_conv_direct_weight_gradient mpe_host_conv_direct_weight_gradient
#define host_conv_direct_workspace mpe_host_conv_direct_workspace
#define host_to_blocked mpe_host_to_blocked
/* register_blocks.c's */
#define host_check_strip mpe_host_check_strip
#define host_check_tile mpe_host_check_tile
/* conv_winograd.c's */
#define host_conv_winograd_workspace mpe_host_conv_winograd_workspace
#define host_conv_winograd_forward mpe_host_conv_winograd_forward
#define host_conv_winograd_input_gradient mpe_host_conv_winograd_input_gradient
#define host_conv_winograd_weight_gradient mpe_host_conv_winograd_weight_gradient
#define host_from_blocked mpe_host_from_blocked
#define swk_pool_bnrc16_forward mpe_pool_bnrc16_forward
#define swk_pool_bnrc16_backward mpe_pool_bnrc16_backward
#define swk_batchnorm_bnrc16_forward mpe_batchnorm_bnrc16_forward
#define swk_batchnorm_bnrc16_recompute mpe_batchnorm_bnrc16_recompute
#define swk_batchnorm_bnrc16_backward mpe_batchnorm_bnrc16_backward
