/* A launch form emu_rewrite does not know (a kernel called through a dereferenced pointer): the rewrite must fail, naming this file. */
__global__ void k(int *x) { x[0] = 1; }

void launch(int *x) {
  void (*kp)(int *) = k;
  (*kp)<<<1, 1>>>(x);
}
