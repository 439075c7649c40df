/* expect: runtime_error | message: forbidden system call 'openat': */
/* openat(AT_FDCWD, <an unmapped address>, O_RDONLY) through the raw system call: the
   sandbox's report reads the path from the kernel's memory and must survive a bad one. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(257L), "D"(-100L), "S"(16L), "d"(0L) : "rcx", "r11", "memory");
}
