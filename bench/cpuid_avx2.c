/* A process that sees its CPU without AVX-512, VNNI, AMX or bf16 (bench/rerank_cost.py --isa avx2).
 *
 * ONNX Runtime picks its kernels from the CPUID instruction alone and has no switch to hold them to
 * fewer extensions, as torch, oneDNN and MKL have. Loaded first (LD_PRELOAD), this library turns on
 * the kernel's CPUID faulting (arch_prctl ARCH_SET_CPUID, Linux 4.12 and later, on a CPU with the
 * cpuid_fault flag): every CPUID the process (and each thread and fork of it) executes then traps,
 * and the handler answers it as the real CPU does with those extensions' bits cleared. The widest code
 * any library then picks is AVX2 + FMA, as on a CPU that has nothing wider. What it cannot hide: the
 * C library's own string functions, chosen before this library loads, and XGETBV (which no library
 * uses without CPUID's bit).
 *
 *   cc -O2 -shared -fPIC -o cpuid_avx2.so cpuid_avx2.c
 *   LD_PRELOAD=$PWD/cpuid_avx2.so python ...
 * Started without CPUID faulting, it says so on stderr and exits with status 97.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

/* leaf 7, subleaf 0: EBX avx512f, dq, ifma, pf, er, cd, bw, vl */
static const unsigned LEAF7_EBX = BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31);
/* ECX avx512_vbmi, vbmi2, vnni, bitalg, vpopcntdq */
static const unsigned LEAF7_ECX = BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14);
/* EDX avx512_4vnniw, 4fmaps, vp2intersect, amx_bf16, avx512_fp16, amx_tile, amx_int8 */
static const unsigned LEAF7_EDX = BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25);
/* leaf 7, subleaf 1: EAX avx_vnni, avx512_bf16, amx_fp16, avx_ifma; EDX avx_vnni_int8, avx_ne_convert,
 * amx_complex, avx10 */
static const unsigned LEAF7_1_EAX = BIT(4) | BIT(5) | BIT(21) | BIT(23);
static const unsigned LEAF7_1_EDX = BIT(4) | BIT(5) | BIT(8) | BIT(19);

static long cpuid_faulting(int faulting) {
  /* ARCH_SET_CPUID's argument: 1 lets CPUID run, 0 makes it fault */
  return syscall(SYS_arch_prctl, ARCH_SET_CPUID, faulting ? 0 : 1);
}

static void answer_cpuid(int signo, siginfo_t *info, void *context) {
  (void)info;
  greg_t *r = ((ucontext_t *)context)->uc_mcontext.gregs;
  const unsigned char *at = (const unsigned char *)r[REG_RIP];
  if (at[0] != 0x0f || at[1] != 0xa2) {   /* a fault of another kind: let it take its course */
    signal(signo, SIG_DFL);
    return;
  }
  unsigned leaf = (unsigned)r[REG_RAX], subleaf = (unsigned)r[REG_RCX], a, b, c, d;
  cpuid_faulting(0);
  __cpuid_count(leaf, subleaf, a, b, c, d);
  cpuid_faulting(1);
  if (leaf == 7 && subleaf == 0) {
    b &= ~LEAF7_EBX;
    c &= ~LEAF7_ECX;
    d &= ~LEAF7_EDX;
  } else if (leaf == 7 && subleaf == 1) {
    a &= ~LEAF7_1_EAX;
    d &= ~LEAF7_1_EDX;
  }
  r[REG_RAX] = a;
  r[REG_RBX] = b;
  r[REG_RCX] = c;
  r[REG_RDX] = d;
  r[REG_RIP] += 2;
}

__attribute__((constructor)) static void hold_to_avx2(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = answer_cpuid;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, NULL) != 0 || cpuid_faulting(1) != 0) {
    static const char why[] = "error: cpuid_avx2.so: this CPU or kernel has no CPUID faulting (cpuid_fault), "
                              "so the extensions cannot be hidden\n";
    (void)!write(2, why, sizeof why - 1);
    _exit(97);
  }
}
