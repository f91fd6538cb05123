/* An AArch64 program that exits 0 and prints something else than
 * attn-cpu-launch's "done": the device must not take it for the launcher. */
#include <stdio.h>

int main(void) {
  puts("hello");
  return 0;
}
