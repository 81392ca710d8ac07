/*
 * cpuid.h: what this CPU can run, as far as the BLAS kernels care: the
 * vector instruction sets that cpuid reports and the OS has enabled
 * (xgetbv: a kernel that uses the AVX-512 registers needs the OS to save
 * them), and the CPU's name.  On other than x86-64 nothing is known and
 * the features are 0.
 */
#ifndef HUNTER_CPUID_H
#define HUNTER_CPUID_H

#include <stddef.h>
#include <stdint.h>

enum cpu_feature {
	CPU_SSE3, CPU_SSSE3, CPU_SSE41, CPU_SSE42, CPU_AVX, CPU_FMA,
	CPU_AVX2, CPU_AVX512F, CPU_AVX512DQ, CPU_AVX512CD, CPU_AVX512BW,
	CPU_AVX512VL, CPU_AVX512_BF16, CPU_AVX512_FP16, CPU_AMX_TILE,
	CPU_AMX_BF16, CPU_NFEATURES
};
#define CPU_BIT(f)	(UINT32_C(1) << (f))
/* What OpenBLAS's SkylakeX kernels use. */
#define CPU_AVX512	(CPU_BIT(CPU_AVX512F) | CPU_BIT(CPU_AVX512DQ) |	\
	CPU_BIT(CPU_AVX512CD) | CPU_BIT(CPU_AVX512BW) | CPU_BIT(CPU_AVX512VL))

struct cpu_info {
	char		 vendor[16];	/* "GenuineIntel", "AuthenticAMD", "" */
	char		 brand[64];	/* "Intel(R) Xeon(R) Processor", trimmed */
	int		 family, model;	/* cpuid's, extended fields added */
	uint32_t	 features;	/* CPU_BIT()s: there and enabled */
};

/* Fill c from this CPU. */
void		 cpu_read(struct cpu_info *c);
/* "avx512f", "amx_tile": the names /proc/cpuinfo gives them. */
const char	*cpu_feature_name(enum cpu_feature);
/* The CPU model as keys and tables name it: the brand, family and model
 * ("Intel(R) Xeon(R) Processor 6/167"), since a virtual machine's brand
 * may say no more than "Xeon". */
void		 cpu_model_name(const struct cpu_info *c, char *buf, size_t len);
/* The cores this process may run on (its affinity mask), at least 1. */
int		 cpu_cores(void);

#endif
