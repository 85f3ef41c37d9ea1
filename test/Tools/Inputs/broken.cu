// Not CUDA: rudnn-emulate refuses it before running anything.
extern "C" __global__ void broken(float *x) { x[0] = undeclared_name; }
