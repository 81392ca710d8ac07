/*
 * cpuid.c: the CPU's vector instruction sets and name (cpuid.h).  A
 * feature counts only when cpuid has it and XCR0 (xgetbv) shows the OS
 * saves its registers: YMM for AVX, the opmask and both ZMM halves for
 * AVX-512, the tile state for AMX.
 */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cpuid.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0's state components (Intel SDM vol. 1, 13.1). */
#define XCR0_SSE	(1u << 1)
#define XCR0_AVX	(1u << 2)
#define XCR0_AVX512	(7u << 5)	/* opmask, ZMM_Hi256, Hi16_ZMM */
#define XCR0_AMX	(3u << 17)	/* TILECFG, TILEDATA */

/* A bit of a cpuid register, and the feature it stands for. */
struct cpu_bit {
	enum cpu_feature f;
	int		 leaf, sub;
	int		 reg;		/* 0 eax, 1 ebx, 2 ecx, 3 edx */
	int		 bit;
	uint32_t	 xcr0;		/* the OS must save these */
};

static const struct cpu_bit cpu_bits[] = {
	{ CPU_SSE3, 1, 0, 2, 0, 0 },
	{ CPU_SSSE3, 1, 0, 2, 9, 0 },
	{ CPU_SSE41, 1, 0, 2, 19, 0 },
	{ CPU_SSE42, 1, 0, 2, 20, 0 },
	{ CPU_AVX, 1, 0, 2, 28, XCR0_SSE | XCR0_AVX },
	{ CPU_FMA, 1, 0, 2, 12, XCR0_SSE | XCR0_AVX },
	{ CPU_AVX2, 7, 0, 1, 5, XCR0_SSE | XCR0_AVX },
	{ CPU_AVX512F, 7, 0, 1, 16, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512DQ, 7, 0, 1, 17, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512CD, 7, 0, 1, 28, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512BW, 7, 0, 1, 30, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512VL, 7, 0, 1, 31, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512_BF16, 7, 1, 0, 5, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AVX512_FP16, 7, 0, 3, 23, XCR0_SSE | XCR0_AVX | XCR0_AVX512 },
	{ CPU_AMX_TILE, 7, 0, 3, 24, XCR0_AMX },
	{ CPU_AMX_BF16, 7, 0, 3, 22, XCR0_AMX },
};

static uint32_t
cpu_xcr0(void)
{
	unsigned	 a, b, c, d;
	uint32_t	 lo, hi;

	/* OSXSAVE: the OS uses XSAVE, so xgetbv may run. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return 0;
	__asm__ volatile ("xgetbv" : "=a" (lo), "=d" (hi) : "c" (0));
	(void)hi;
	return lo;
}

void
cpu_read(struct cpu_info *ci)
{
	unsigned	 max, r[4], brand[12];
	uint32_t	 xcr0 = cpu_xcr0();
	char		*s;

	memset(ci, 0, sizeof *ci);
	if ((max = __get_cpuid_max(0, NULL)) == 0)
		return;
	__cpuid(0, r[0], r[1], r[3], r[2]);	/* ebx, edx, ecx spell it */
	memcpy(ci->vendor, &r[1], 12);
	__cpuid(1, r[0], r[1], r[2], r[3]);
	ci->family = (int)((r[0] >> 8) & 0xf);
	ci->model = (int)((r[0] >> 4) & 0xf);
	if (ci->family == 0xf)
		ci->family += (int)((r[0] >> 20) & 0xff);
	if (ci->family == 0x6 || ci->family >= 0xf)
		ci->model += (int)((r[0] >> 16) & 0xf) << 4;
	for (size_t i = 0; i < sizeof cpu_bits / sizeof cpu_bits[0]; i++) {
		const struct cpu_bit *cb = &cpu_bits[i];

		if ((unsigned)cb->leaf > max)
			continue;
		__cpuid_count(cb->leaf, cb->sub, r[0], r[1], r[2], r[3]);
		if ((r[cb->reg] >> cb->bit & 1) && (xcr0 & cb->xcr0) ==
		    cb->xcr0)
			ci->features |= CPU_BIT(cb->f);
	}
	if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
		for (unsigned i = 0; i < 3; i++)
			__cpuid(0x80000002u + i, brand[4 * i], brand[4 * i + 1],
			    brand[4 * i + 2], brand[4 * i + 3]);
		memcpy(ci->brand, brand, sizeof brand);
		ci->brand[sizeof brand] = '\0';
		for (s = ci->brand; *s == ' '; s++)
			;
		memmove(ci->brand, s, strlen(s) + 1);
		for (s = ci->brand + strlen(ci->brand); s > ci->brand &&
		    s[-1] == ' '; s--)
			s[-1] = '\0';
	}
}
#else
void
cpu_read(struct cpu_info *ci)
{
	memset(ci, 0, sizeof *ci);
}
#endif

const char *
cpu_feature_name(enum cpu_feature f)
{
	static const char *const names[CPU_NFEATURES] = {
		[CPU_SSE3] = "pni", [CPU_SSSE3] = "ssse3",
		[CPU_SSE41] = "sse4_1", [CPU_SSE42] = "sse4_2",
		[CPU_AVX] = "avx", [CPU_FMA] = "fma", [CPU_AVX2] = "avx2",
		[CPU_AVX512F] = "avx512f", [CPU_AVX512DQ] = "avx512dq",
		[CPU_AVX512CD] = "avx512cd", [CPU_AVX512BW] = "avx512bw",
		[CPU_AVX512VL] = "avx512vl", [CPU_AVX512_BF16] = "avx512_bf16",
		[CPU_AVX512_FP16] = "avx512_fp16", [CPU_AMX_TILE] = "amx_tile",
		[CPU_AMX_BF16] = "amx_bf16",
	};

	return f >= 0 && f < CPU_NFEATURES ? names[f] : "?";
}

void
cpu_model_name(const struct cpu_info *ci, char *buf, size_t len)
{
	snprintf(buf, len, "%s %d/%d", ci->brand[0] != '\0' ? ci->brand :
	    ci->vendor[0] != '\0' ? ci->vendor : "unknown CPU", ci->family,
	    ci->model);
}

int
cpu_cores(void)
{
	cpu_set_t	 set;
	long		 n;

	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}
