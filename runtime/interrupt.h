/* Stopping training cleanly on SIGINT and SIGTERM (interrupt.c). */
#ifndef SWNC_RT_INTERRUPT_H
#define SWNC_RT_INTERRUPT_H

void swn_interrupt_catch(void);   /* from here on, the first signal is only recorded */
void swn_interrupt_release(void); /* the handlers there were before */
int swn_interrupt_signal(void);   /* the signal recorded, or 0 */

#endif
