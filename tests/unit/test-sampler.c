/*
 * test-sampler.c: the node sampler against a fake root, a temporary
 * directory with hand-written proc and sys files, and a fake monotonic
 * clock so every rate comes out exact.  Counters are advanced between two
 * samples and the percentages, bytes/s, watts and degrees are checked
 * to the last digit; missing files must give invalid bits and JSON null.
 * One test runs on the real system root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/agent/sampler.h"

static double	fake_now;

static double
fake_clock(void)
{
	return fake_now;
}

/* Write ROOT/rel, making its directories. */
static void
put(const char *root, const char *rel, const char *fmt, ...)
{
	char	 path[PATH_MAX], *p;
	FILE	*f;
	va_list	 ap;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void
mkdirs(const char *root, const char *rel)
{
	char	path[PATH_MAX];

	put(root, rel, "");	/* makes the parents ... */
	snprintf(path, sizeof path, "%s/%s", root, rel);
	unlink(path);		/* ... then the leaf is a directory */
	assert_int_equal(mkdir(path, 0755), 0);
}

static void
rm(const char *root, const char *rel)
{
	char	path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", root, rel);
	assert_int_equal(unlink(path), 0);
}

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int
setup(void **state)
{
	char	*root = strdup("/tmp/test-sampler.XXXXXX");

	if (root == NULL || mkdtemp(root) == NULL)
		return -1;
	fake_now = 1000;
	*state = root;
	return 0;
}

static int
teardown(void **state)
{
	nftw(*state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(*state);
	return 0;
}

static const char net_head[] =
    "Inter-|   Receive                                                |"
    "  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|"
    "bytes    packets errs drop fifo colls carrier compressed\n";

/* Write every file with counters advanced by step (0 or 1). */
static void
put_all(const char *root, int step)
{
	put(root, "proc/stat",
	    "cpu  %d %d %d %d %d %d %d %d 50 0\n"
	    "cpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345 0 0\nctxt 99\n",
	    100 + step * 30, 10 + step * 10, 50 + step * 15, 800 + step * 100,
	    20 + step * 25, 5 + step * 5, 5 + step * 5, 0 + step * 10);
	put(root, "proc/loadavg", "1.25 0.50 0.10 2/345 6789\n");
	put(root, "proc/meminfo",
	    "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n"
	    "MemAvailable:    4000000 kB\nBuffers:          100 kB\n"
	    "SwapTotal:       2000000 kB\nSwapFree:        1500000 kB\n");
	put(root, "proc/net/dev", "%s"
	    "    lo: %d 10 0 0 0 0 0 0 %d 10 0 0 0 0 0 0\n"
	    "  eth0: %d 10 0 0 0 0 0 0 %d 10 0 0 0 0 0 0\n"
	    "  ib0:%d 10 0 0 0 0 0 0 %d 10 0 0 0 0 0 0\n", net_head,
	    1000 + step * 999999, 1000 + step * 999999,
	    5000 + step * 3000, 7000 + step * 1000,
	    100 + step * 1000, 200 + step * 500);
	put(root, "proc/diskstats",
	    "   7       0 loop0 10 0 %d 0 10 0 %d 0 0 0 0\n"
	    "   8       0 sda 10 0 %d 0 10 0 %d 0 0 0 0 0 0 0 0 0 0\n"
	    "   8       1 sda1 10 0 %d 0 10 0 %d 0 0 0 0\n"
	    " 259       0 nvme0n1 10 0 %d 0 10 0 %d 0 0 0 0\n"
	    " 259       1 nvme0n1p1 10 0 %d 0 10 0 %d 0 0 0 0\n"
	    " 253       0 dm-0 10 0 %d 0 10 0 %d 0 0 0 0\n",
	    step * 777, step * 777, 100 + step * 1000, 200 + step * 2000,
	    step * 1000, step * 2000, 300 + step * 3000, 400 + step * 4000,
	    step * 3000, step * 4000, step * 555, step * 555);
	put(root, "sys/class/powercap/intel-rapl:0/energy_uj", "%d\n",
	    5000000 + step * 2000000);
	put(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj",
	    "262143328850\n");
	put(root, "sys/class/hwmon/hwmon0/temp1_input", "45000\n");
	put(root, "sys/class/hwmon/hwmon0/temp2_input", "71500\n");
	put(root, "sys/class/hwmon/hwmon0/temp2_max", "99000\n");
	put(root, "sys/class/hwmon/hwmon1/temp1_input", "-5000\n");
	put(root, "sys/class/hwmon/hwmon1/fan1_input", "120000\n");
}

/* Whole disks: sys/block/NAME; loop0 and dm-0 are there too, as on a
 * real system, and must still be left out. */
static void
put_blocks(const char *root)
{
	mkdirs(root, "sys/block/sda");
	mkdirs(root, "sys/block/nvme0n1");
	mkdirs(root, "sys/block/loop0");
	mkdirs(root, "sys/block/dm-0");
}

#define VALID(ns, m)	node_sample_valid((ns), (m))
#define BIT(m)		(UINT64_C(1) << (m))
/* The first fifteen rows, which the fake root of put_all has files for. */
#define FIRST15		((UINT64_C(1) << (NM_TEMP + 1)) - 1)

static void
t_names(void **state)
{
	static const char *want[NM_COUNT] = {
		"cpu_util", "cpu_user", "cpu_sys", "cpu_iowait", "load1",
		"mem_used", "mem_total", "swap_used", "swap_total", "net_rx",
		"net_tx", "disk_read", "disk_write", "power", "temp", "cpus",
		"cpu_freq", "cpu_throttle", "psi_cpu", "psi_cpu_full",
		"psi_mem", "psi_mem_full", "psi_io", "psi_io_full",
		"mem_cache", "mem_available", "major_faults", "net_errors",
		"net_drops", "tcp_retrans", "disk_util", "state_free",
		"state_size", "state_inodes_free", "state_inodes", "ckpt_free",
		"ckpt_size", "ckpt_inodes_free", "ckpt_inodes", "ckpt_bytes",
		"agent_fds", "blas_gflops"
	};
	int	i;

	for (i = 0; i < NM_COUNT; i++)
		assert_string_equal(node_metric_name(i), want[i]);
	assert_null(node_metric_name(NM_COUNT));
}

/* The first sample has levels but no rates. */
static void
t_first(void **state)
{
	struct sampler		*s;
	struct node_sample	 ns;

	put_all(*state, 0);
	put_blocks(*state);
	s = sampler_create(*state);
	sampler_set_clock(s, fake_clock);
	sampler_sample(s, &ns, NULL);
	assert_true(ns.time > 1e9);
	assert_false(VALID(&ns, NM_CPU_UTIL));
	assert_false(VALID(&ns, NM_CPU_USER));
	assert_false(VALID(&ns, NM_CPU_SYS));
	assert_false(VALID(&ns, NM_CPU_IOWAIT));
	assert_false(VALID(&ns, NM_NET_RX));
	assert_false(VALID(&ns, NM_NET_TX));
	assert_false(VALID(&ns, NM_DISK_READ));
	assert_false(VALID(&ns, NM_DISK_WRITE));
	assert_false(VALID(&ns, NM_POWER));
	assert_true(VALID(&ns, NM_LOAD1));
	assert_true(ns.v[NM_LOAD1] == 1.25);
	assert_true(VALID(&ns, NM_MEM_TOTAL));
	assert_true(ns.v[NM_MEM_TOTAL] == 16000000 * 1024.0);
	assert_true(VALID(&ns, NM_MEM_USED));
	assert_true(ns.v[NM_MEM_USED] == 12000000 * 1024.0);
	assert_true(VALID(&ns, NM_SWAP_TOTAL));
	assert_true(ns.v[NM_SWAP_TOTAL] == 2000000 * 1024.0);
	assert_true(VALID(&ns, NM_SWAP_USED));
	assert_true(ns.v[NM_SWAP_USED] == 500000 * 1024.0);
	/* The hottest sensor; temp2_max and fan1_input are not readings. */
	assert_true(VALID(&ns, NM_TEMP));
	assert_true(ns.v[NM_TEMP] == 71.5);
	sampler_free(s);
}

/* Two samples half a second apart: exact shares and rates. */
static void
t_rates(void **state)
{
	struct sampler		*s;
	struct node_sample	 ns;

	put_all(*state, 0);
	put_blocks(*state);
	s = sampler_create(*state);
	sampler_set_clock(s, fake_clock);
	sampler_sample(s, &ns, NULL);
	put_all(*state, 1);
	fake_now += 0.5;
	sampler_sample(s, &ns, NULL);
	assert_int_equal(ns.valid & FIRST15, FIRST15);
	/* Deltas: user 30 nice 10 system 15 idle 100 iowait 25 irq 5
	 * softirq 5 steal 10, total 200; guest is in user already. */
	assert_true(ns.v[NM_CPU_UTIL] == 37.5);	/* 75 of 200 */
	assert_true(ns.v[NM_CPU_USER] == 20);		/* user + nice */
	assert_true(ns.v[NM_CPU_SYS] == 12.5);		/* system+irq+softirq */
	assert_true(ns.v[NM_CPU_IOWAIT] == 12.5);
	/* eth0 and ib0 only: rx 3000 + 1000, tx 1000 + 500 in 0.5 s. */
	assert_true(ns.v[NM_NET_RX] == 8000);
	assert_true(ns.v[NM_NET_TX] == 3000);
	/* sda and nvme0n1 only: 4000 and 6000 sectors in 0.5 s. */
	assert_true(ns.v[NM_DISK_READ] == 4000 * 512 * 2);
	assert_true(ns.v[NM_DISK_WRITE] == 6000 * 512 * 2);
	/* 2 J in 0.5 s. */
	assert_true(ns.v[NM_POWER] == 4);
	sampler_free(s);
}

/* The energy counter wraps at max_energy_range_uj. */
static void
t_rapl_wrap(void **state)
{
	struct sampler		*s;
	struct node_sample	 ns;
	const char		*e = "sys/class/powercap/intel-rapl:0/energy_uj";

	put(*state, e, "999000000\n");
	put(*state, "sys/class/powercap/intel-rapl:0/max_energy_range_uj",
	    "1000000000\n");
	s = sampler_create(*state);
	sampler_set_clock(s, fake_clock);
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_POWER));
	put(*state, e, "2000000\n");	/* 1 J to the wrap, 2 J after */
	fake_now += 2;
	sampler_sample(s, &ns, NULL);
	assert_true(VALID(&ns, NM_POWER));
	assert_true(ns.v[NM_POWER] == 1.5);
	/* A second socket is summed in; a change of count restarts. */
	put(*state, "sys/class/powercap/intel-rapl:1/energy_uj", "0\n");
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_POWER));
	put(*state, e, "5000000\n");
	put(*state, "sys/class/powercap/intel-rapl:1/energy_uj", "4000000\n");
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_true(ns.v[NM_POWER] == 7);
	/* Without max_energy_range_uj a wrap cannot be measured. */
	rm(*state, "sys/class/powercap/intel-rapl:0/max_energy_range_uj");
	put(*state, e, "1000\n");
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_POWER));
	/* An unreadable counter makes power unknown. */
	rm(*state, e);
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_POWER));
	sampler_free(s);
}

/* Nothing there: every bit clear, every JSON value null. */
static void
t_missing(void **state)
{
	struct sampler		*s;
	struct node_sample	 ns;
	json_t			*j;
	int			 i;

	s = sampler_create(*state);
	sampler_set_clock(s, fake_clock);
	sampler_sample(s, &ns, NULL);
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_int_equal(ns.valid, 0);
	j = node_sample_json(&ns);
	assert_int_equal(json_object_size(j), NM_COUNT + 1);
	assert_true(json_is_real(json_object_get(j, "time")));
	assert_null(json_object_get(j, "t"));	/* the frame's type */
	for (i = 0; i < NM_COUNT; i++)
		assert_true(json_is_null(json_object_get(j,
		    node_metric_name(i))));
	json_decref(j);
	/* No aggregate "cpu " line: no shares from per-CPU lines. */
	put(*state, "proc/stat", "cpu0 1 2 3 4 5 6 7 8\ncpu1 1 2 3 4\n");
	sampler_sample(s, &ns, NULL);
	put(*state, "proc/stat", "cpu0 9 9 9 9 9 9 9 9\ncpu1 9 9 9 9\n");
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_CPU_UTIL));
	/* meminfo from an old kernel: total known, used not. */
	put(*state, "proc/meminfo", "MemTotal: 1000 kB\nMemFree: 10 kB\n");
	sampler_sample(s, &ns, NULL);
	assert_int_equal(ns.valid, BIT(NM_MEM_TOTAL) | BIT(NM_CPUS));
	assert_true(ns.v[NM_CPUS] == 2);
	assert_true(ns.v[NM_MEM_TOTAL] == 1024000);
	sampler_free(s);
}

/* One file gone between samples clears only its metrics, and the rate
 * after it comes back waits for a fresh base. */
static void
t_one_gone(void **state)
{
	struct sampler		*s;
	struct node_sample	 ns;

	put_all(*state, 0);
	put_blocks(*state);
	s = sampler_create(*state);
	sampler_set_clock(s, fake_clock);
	sampler_sample(s, &ns, NULL);
	rm(*state, "proc/net/dev");
	rm(*state, "sys/class/hwmon/hwmon0/temp1_input");
	rm(*state, "sys/class/hwmon/hwmon0/temp2_input");
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	/* No jiffy passed either, so no CPU shares: 0/0 is not 0%. */
	assert_int_equal(ns.valid & FIRST15, FIRST15 & ~(BIT(NM_NET_RX) |
	    BIT(NM_NET_TX) | BIT(NM_CPU_UTIL) | BIT(NM_CPU_USER) |
	    BIT(NM_CPU_SYS) | BIT(NM_CPU_IOWAIT)));
	assert_true(ns.v[NM_TEMP] == -5);
	assert_true(ns.v[NM_DISK_READ] == 0);
	assert_true(ns.v[NM_POWER] == 0);
	put_all(*state, 1);
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	/* The CPU base waited for a tick; net has a base only now. */
	assert_true(ns.v[NM_CPU_UTIL] == 37.5);
	assert_false(VALID(&ns, NM_NET_RX));
	assert_true(VALID(&ns, NM_DISK_READ));
	assert_true(ns.v[NM_DISK_READ] == 4000 * 512);
	/* Base: eth0 rx 8000 tx 8000, ib0 1100 and 700 (lo left out).  ib0
	 * goes: it takes nothing with it, the sum is eth0's growth. */
	put(*state, "proc/net/dev", "%s  eth0: 10100 1 0 0 0 0 0 0 10000 1 "
	    "0 0 0 0 0 0\n", net_head);
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_true(ns.v[NM_NET_RX] == 2100);
	assert_true(ns.v[NM_NET_TX] == 2000);
	/* A counter that goes back (interface reset) gives no rate. */
	put(*state, "proc/net/dev", "%s  eth0: 10 1 0 0 0 0 0 0 9000 1 "
	    "0 0 0 0 0 0\n", net_head);
	fake_now += 1;
	sampler_sample(s, &ns, NULL);
	assert_false(VALID(&ns, NM_NET_RX));
	assert_false(VALID(&ns, NM_NET_TX));
	sampler_free(s);
}

/* Files longer than the read buffer: 300 interfaces, the last line with
 * no newline, and a 10 kB line whose tail looks like an interface but is
 * cut off and must not count.  In /proc/stat only the first "cpu " line
 * counts, not a later one past a 24 kB intr line. */
static void
t_long_files(void **state)
{
	struct sampler		*s = sampler_create(*state);
	struct node_sample	 ns;
	char			 rel[PATH_MAX];
	FILE			*f;
	int			 i, step;

	sampler_set_clock(s, fake_clock);
	for (step = 0; step < 2; step++) {
		snprintf(rel, sizeof rel, "%s/proc/stat", (char *)*state);
		put(*state, "proc/stat", "");
		assert_non_null(f = fopen(rel, "w"));
		fprintf(f, "cpu  %d 0 0 %d 0 0 0 0\nintr", 10 + step * 10,
		    100 + step * 30);
		for (i = 0; i < 5000; i++)
			fprintf(f, " %d", i);
		fprintf(f, "\ncpu  1 1 1 1 1 1 1 1\n");
		fclose(f);
		snprintf(rel, sizeof rel, "%s/proc/net/dev", (char *)*state);
		put(*state, "proc/net/dev", "");
		assert_non_null(f = fopen(rel, "w"));
		fputs(net_head, f);
		fprintf(f, "junk%10000s", "");
		fprintf(f, "bogus: %d 0 0 0 0 0 0 0 0\n", step * 1000);
		for (i = 0; i < 300; i++)
			fprintf(f, "veth%04d: %d 1 0 0 0 0 0 0 %d 1 0 0 0 0 0 "
			    "0%s", i, 1000000 + step * i, 5 + step * 2,
			    i < 299 ? "\n" : "");
		fclose(f);
		sampler_sample(s, &ns, NULL);
		fake_now += 1;
	}
	assert_true(ns.v[NM_CPU_UTIL] == 25);
	assert_true(ns.v[NM_NET_RX] == 299 * 300 / 2);	/* sum of step * i */
	assert_true(ns.v[NM_NET_TX] == 600);
	sampler_free(s);
}


/* Each CPU (shares, clock), throttling, pressure, memory's cache and
 * what is available, major faults, each interface, TCP retransmits and
 * each disk's busy time: two samples half a second apart, exact. */
static void
t_more(void **state)
{
	static struct node_lists nl;
	struct sampler		*s;
	struct node_sample	 ns;
	const char		*root = *state;

	put_all(root, 0);
	put_blocks(root);
	for (int step = 0; step < 2; step++) {
		put(root, "proc/stat", "cpu  %d 0 %d %d 0 0 0 0\n"
		    "cpu0 %d 0 0 %d 0 0 0 0\ncpu1 0 0 %d %d 0 0 0 0\nintr 1\n",
		    100 + step * 40, 100 + step * 10, 800 + step * 150,
		    100 + step * 40, 400 + step * 60, 100 + step * 10,
		    400 + step * 90);
		put(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
		    "%d\n", 2400000 + step * 100000);
		put(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
		    "%d\n", 1200000);
		put(root, "sys/devices/system/cpu/cpu0/thermal_throttle/"
		    "core_throttle_count", "%d\n", 7 + step * 3);
		put(root, "sys/devices/system/cpu/cpu0/thermal_throttle/"
		    "package_throttle_count", "%d\n", 1 + step * 1);
		put(root, "sys/devices/system/cpu/cpu1/thermal_throttle/"
		    "core_throttle_count", "%d\n", 2);
		put(root, "proc/vmstat", "nr_free_pages 5\npgmajfault %d\n"
		    "pgminfault 9\n", 1000 + step * 25);
		put(root, "proc/net/dev", "%s"
		    "    lo: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0\n"
		    "  ifb0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
		    "  eth0: %d %d %d %d 0 0 0 0 %d %d %d %d 0 0 0 0\n",
		    net_head, 1000 + step * 5000, 10 + step * 50, 1 + step * 2,
		    step * 4, 2000 + step * 3000, 20 + step * 30, step, 5 + step,
		    0);
		put(root, "proc/net/snmp", "Ip: Forwarding DefaultTTL\n"
		    "Ip: 1 64\nTcp: RtoAlgorithm RtoMin RtoMax MaxConn "
		    "ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab "
		    "InSegs OutSegs RetransSegs InErrs\nTcp: 1 200 120000 -1 5 6 "
		    "7 8 9 10 11 %d 0\n", 40 + step * 6);
		put(root, "proc/diskstats",
		    "   8       0 sda 10 0 %d 0 10 0 %d 0 0 %d 0\n"
		    " 259       0 nvme0n1 10 0 0 0 10 0 0 0 0 %d 0\n",
		    step * 1000, step * 3000, 100 + step * 400, step * 100);
		put(root, "proc/pressure/cpu", "some avg10=12.50 avg60=1 avg300=0 "
		    "total=5\nfull avg10=0.00 avg60=0 avg300=0 total=0\n");
		put(root, "proc/pressure/memory", "some avg10=3.25 avg60=1 "
		    "avg300=0 total=5\nfull avg10=1.75 avg60=0 total=0\n");
		put(root, "proc/pressure/io", "some avg10=0.50 avg60=1 avg300=0 "
		    "total=5\n");
		put(root, "proc/meminfo", "MemTotal: 16000000 kB\n"
		    "MemFree: 1000000 kB\nMemAvailable: 4000000 kB\n"
		    "Buffers: 100 kB\nCached: 2000000 kB\nSwapCached: 0 kB\n"
		    "SwapTotal: 0 kB\nSwapFree: 0 kB\nSReclaimable: 300 kB\n");
		if (step == 0) {
			s = sampler_create(root);
			sampler_set_clock(s, fake_clock);
		} else
			fake_now += 0.5;
		sampler_sample(s, &ns, &nl);
	}
	assert_true(ns.v[NM_CPUS] == 2);
	assert_int_equal(nl.ncores, 2);
	/* cpu0: 40 of 100 jiffies busy; cpu1: 10 of 100. */
	assert_true(nl.cores[0].v[CM_UTIL] == 40);
	assert_true(nl.cores[1].v[CM_UTIL] == 10);
	assert_true(nl.cores[0].v[CM_FREQ] == 2500);	/* kHz to MHz */
	assert_true(nl.cores[1].v[CM_FREQ] == 1200);
	assert_true(ns.v[NM_CPU_FREQ] == 1850);
	/* 3 + 1 events in 0.5 s. */
	assert_true(ns.v[NM_CPU_THROTTLE] == 8);
	assert_true(ns.v[NM_PSI_CPU] == 12.5 && ns.v[NM_PSI_CPU_FULL] == 0);
	assert_true(ns.v[NM_PSI_MEM] == 3.25 && ns.v[NM_PSI_MEM_FULL] == 1.75);
	assert_true(ns.v[NM_PSI_IO] == 0.5);
	assert_false(VALID(&ns, NM_PSI_IO_FULL));	/* an old kernel's file */
	assert_true(ns.v[NM_MEM_CACHE] == (100 + 2000000 + 300) * 1024.0);
	assert_true(ns.v[NM_MEM_AVAIL] == 4000000 * 1024.0);
	assert_true(ns.v[NM_MAJOR_FAULTS] == 50);
	/* eth0 only: ifb0 never moved a byte, lo is left out. */
	assert_int_equal(nl.nifaces, 1);
	assert_string_equal(nl.ifaces[0].name, "eth0");
	assert_true(nl.ifaces[0].v[IM_RX] == 10000);
	assert_true(nl.ifaces[0].v[IM_TX] == 6000);
	assert_true(nl.ifaces[0].v[IM_RX_PACKETS] == 100);
	assert_true(nl.ifaces[0].v[IM_TX_PACKETS] == 60);
	assert_true(nl.ifaces[0].v[IM_RX_ERRORS] == 4);
	assert_true(nl.ifaces[0].v[IM_TX_ERRORS] == 2);
	assert_true(nl.ifaces[0].v[IM_RX_DROPS] == 8);
	assert_true(nl.ifaces[0].v[IM_TX_DROPS] == 2);
	assert_true(ns.v[NM_NET_ERRORS] == 6);
	assert_true(ns.v[NM_NET_DROPS] == 10);
	assert_true(ns.v[NM_TCP_RETRANS] == 12);
	/* sda busy 400 ms in 0.5 s: 80%; nvme0n1 100 ms: 20%. */
	assert_int_equal(nl.ndisks, 2);
	assert_string_equal(nl.disks[0].name, "sda");
	assert_true(nl.disks[0].v[DM_UTIL] == 80);
	assert_true(nl.disks[0].v[DM_READ] == 1000 * 512 * 2);
	assert_true(nl.disks[0].v[DM_WRITE] == 3000 * 512 * 2);
	assert_true(nl.disks[1].v[DM_UTIL] == 20);
	assert_true(ns.v[NM_DISK_UTIL] == 80);
	/* Without cpufreq, /proc/cpuinfo's. */
	rm(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
	put(root, "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2000.5\n\n"
	    "processor\t: 1\ncpu MHz\t\t: 3000.5\n");
	fake_now += 0.5;
	sampler_sample(s, &ns, &nl);
	assert_true(ns.v[NM_CPU_FREQ] == 2500.5);
	assert_true(nl.cores[1].v[CM_FREQ] == 3000.5);
	sampler_free(s);
}

/* The file systems of the state and checkpoint directories (statvfs of
 * the nearest that exists) and a checkpoint's size: the largest file of
 * the directory, a temporary one left out. */
static void
t_fs(void **state)
{
	static struct node_lists nl;
	struct sampler	*s = sampler_create(*state);
	struct node_sample ns;
	struct statvfs	 st;
	char		 ckpt[PATH_MAX], jobs[PATH_MAX];

	snprintf(ckpt, sizeof ckpt, "%s/ckpt/job/not-yet", (char *)*state);
	sampler_set_dirs(s, *state, ckpt);
	sampler_sample(s, &ns, &nl);
	assert_int_equal(statvfs(*state, &st), 0);
	assert_true(ns.v[NM_STATE_SIZE] == (double)st.f_blocks * st.f_frsize);
	assert_true(ns.v[NM_CKPT_SIZE] == ns.v[NM_STATE_SIZE]);
	assert_true(fabs(ns.v[NM_STATE_FREE] - (double)st.f_bavail *
	    st.f_frsize) < 0.01 * ns.v[NM_STATE_SIZE]);
	assert_false(VALID(&ns, NM_CKPT_BYTES));	/* nothing there */
	put(*state, "ckpt/job/step-000000001.safetensors", "%0500d", 0);
	put(*state, "ckpt/job/step-000000002.safetensors", "%0700d", 0);
	put(*state, "ckpt/job/config.json", "{}");
	put(*state, "ckpt/job/step-000000003.safetensors.tmp", "%09000d", 0);
	snprintf(ckpt, sizeof ckpt, "%s/ckpt/job", (char *)*state);
	sampler_set_dirs(s, *state, ckpt);
	sampler_sample(s, &ns, &nl);
	assert_true(ns.v[NM_CKPT_BYTES] == 700);
	/* A directory of jobs' directories: the one changed last. */
	snprintf(jobs, sizeof jobs, "%s/ckpt", (char *)*state);
	sampler_set_dirs(s, NULL, jobs);
	sampler_sample(s, &ns, &nl);
	assert_true(ns.v[NM_CKPT_BYTES] == 700);
	assert_false(VALID(&ns, NM_STATE_FREE));
	sampler_free(s);
}

/* A rank's processes under the root: a worker (one process, two
 * threads), a program's group of two; CPU, switches, fds, threads, and
 * the GPU memory of a GPU process found by its process group. */
static void
t_procs(void **state)
{
	struct sampler	*s = sampler_create(*state);
	struct proc_want w[2] = { { 100, false }, { 200, true } };
	struct rank_report rr[2];
	struct gpu_sample gs[1];
	long		 hz = sysconf(_SC_CLK_TCK);

	sampler_set_clock(s, fake_clock);
	for (int step = 0; step < 2; step++) {
		/* pid (comm) state ppid pgrp ... utime stime ... threads */
		put(*state, "proc/100/stat", "100 (hunter worker) S 1 100 1 0 -1 "
		    "0 0 0 0 0 %ld %ld 0 0 20 0 2 0 5 1000 7\n", step * hz / 2,
		    0L);
		put(*state, "proc/100/task/100/status", "Name: w\n"
		    "voluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:"
		    "\t%d\n", 10 + step * 100, 1 + step * 4);
		put(*state, "proc/100/task/101/status", "voluntary_ctxt_switches:"
		    "\t%d\nnonvoluntary_ctxt_switches:\t%d\n", step * 50, 0);
		put(*state, "proc/200/stat", "200 (python3) S 1 200 1 0 -1 0 0 0 "
		    "0 0 %ld 0 0 0 20 0 1 0\n", step * hz);
		put(*state, "proc/201/stat", "201 (pt_data_worker) R 200 200 1 0 "
		    "-1 0 0 0 0 0 %ld 0 0 0 20 0 3 0\n", step * hz / 4);
		put(*state, "proc/300/stat", "300 (other) R 1 300 1 0 -1 0 0 0 "
		    "0 0 %ld 0 0 0 20 0 1 0\n", step * hz);
		for (int p = 200; p <= 201; p++) {
			char	 rel[64];

			snprintf(rel, sizeof rel, "proc/%d/task/%d/status", p, p);
			put(*state, rel, "voluntary_ctxt_switches:\t%d\n"
			    "nonvoluntary_ctxt_switches:\t%d\n", step * 10, 0);
		}
		if (step == 0) {
			mkdirs(*state, "proc/100/fd");
			put(*state, "proc/100/fd/0", "");
			put(*state, "proc/100/fd/1", "");
			put(*state, "proc/100/fd/3", "");
			mkdirs(*state, "proc/201/fd");
			put(*state, "proc/201/fd/0", "");
		} else
			fake_now += 0.5;
		memset(gs, 0, sizeof gs);
		gs[0].nprocs = 2;
		gs[0].procs[0] = (struct gpu_proc){ 201, 3e9, 0 };
		gs[0].procs[1] = (struct gpu_proc){ 300, 1e9, 0 };
		sampler_procs(s, w, 2, gs, 1, rr);
	}
	assert_true(rr[0].valid & RM_BIT(PROC_CPU));
	assert_true(rr[0].proc_cpu == 100);		/* hz/2 ticks in 0.5 s */
	assert_int_equal(rr[0].threads, 2);
	assert_int_equal(rr[0].rss, 7 * sysconf(_SC_PAGESIZE));
	assert_int_equal(rr[0].pid, 100);
	assert_int_equal(rr[0].fds, 3);
	assert_true(rr[0].ctx_voluntary == 300);	/* 150 in 0.5 s */
	assert_true(rr[0].ctx_involuntary == 8);
	assert_true(rr[0].valid & RM_BIT(GPU_MEM));
	assert_int_equal(rr[0].gpu_mem, 0);		/* none of its own */
	/* The group: 200 and 201, not 300. */
	assert_true(rr[1].proc_cpu == 250);
	assert_int_equal(rr[1].threads, 4);
	assert_int_equal(rr[1].fds, 1);
	assert_true(rr[1].ctx_voluntary == 40);
	assert_int_equal(rr[1].gpu_mem, 3000000000L);
	assert_int_equal(gs[0].procs[0].owner, 200);
	assert_int_equal(gs[0].procs[1].owner, 0);
	/* A rank gone from /proc: nothing known of it. */
	w[0].pid = 999;
	sampler_procs(s, w, 1, NULL, 0, rr);
	assert_int_equal(rr[0].valid, 0);
	sampler_free(s);
}

static void
t_json(void **state)
{
	struct node_sample	 ns = { .time = 1700000000.5 };
	json_t			*j;

	ns.v[NM_CPU_UTIL] = 12.5;
	ns.v[NM_MEM_TOTAL] = 1024;
	ns.v[NM_POWER] = 99;		/* not valid: must not show */
	ns.valid = BIT(NM_CPU_UTIL) | BIT(NM_MEM_TOTAL);
	j = node_sample_json(&ns);
	assert_int_equal(json_object_size(j), NM_COUNT + 1);
	assert_true(json_real_value(json_object_get(j, "time")) == 1700000000.5);
	assert_true(json_number_value(json_object_get(j, "cpu_util")) == 12.5);
	assert_true(json_number_value(json_object_get(j, "mem_total")) == 1024);
	assert_true(json_is_null(json_object_get(j, "power")));
	assert_true(json_is_null(json_object_get(j, "cpu_user")));
	assert_true(json_is_null(json_object_get(j, "temp")));
	json_decref(j);
}

static void
t_ring(void **state)
{
	struct sample_ring	r;
	struct node_sample	ns = { 0 };
	int			i;

	sample_ring_init(&r, 3);
	assert_null(sample_ring_get(&r, 0));
	for (i = 1; i <= 2; i++) {
		ns.time = i;
		sample_ring_push(&r, &ns);
	}
	assert_true(sample_ring_get(&r, 0)->time == 1);
	assert_true(sample_ring_get(&r, 1)->time == 2);
	assert_null(sample_ring_get(&r, 2));
	for (i = 3; i <= 7; i++) {
		ns.time = i;
		sample_ring_push(&r, &ns);
	}
	assert_int_equal(r.len, 3);
	assert_true(sample_ring_get(&r, 0)->time == 5);
	assert_true(sample_ring_get(&r, 1)->time == 6);
	assert_true(sample_ring_get(&r, 2)->time == 7);
	assert_null(sample_ring_get(&r, 3));
	sample_ring_free(&r);
}

/* The real machine: memory is always there, CPU shares after a tick. */
static void
t_real(void **state)
{
	struct sampler		*s = sampler_create("");
	struct node_sample	 ns;
	struct timespec		 ts = { 0, 100 * 1000 * 1000 };
	json_t			*j;

	sampler_sample(s, &ns, NULL);
	assert_true(VALID(&ns, NM_MEM_TOTAL));
	assert_true(ns.v[NM_MEM_TOTAL] > 0);
	assert_false(VALID(&ns, NM_CPU_UTIL));
	nanosleep(&ts, NULL);
	sampler_sample(s, &ns, NULL);
	assert_true(VALID(&ns, NM_CPU_UTIL));
	assert_true(ns.v[NM_CPU_UTIL] >= 0 && ns.v[NM_CPU_UTIL] <= 100);
	assert_true(VALID(&ns, NM_NET_RX));
	assert_true(VALID(&ns, NM_LOAD1));
	j = node_sample_json(&ns);
	if (getenv("SAMPLER_SHOW") != NULL) {
		char *d = json_dumps(j, JSON_SORT_KEYS);
		printf("%s\n", d);
		free(d);
	}
	json_decref(j);
	sampler_free(s);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(t_names),
		cmocka_unit_test_setup_teardown(t_first, setup, teardown),
		cmocka_unit_test_setup_teardown(t_rates, setup, teardown),
		cmocka_unit_test_setup_teardown(t_rapl_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(t_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(t_one_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(t_long_files, setup, teardown),
		cmocka_unit_test_setup_teardown(t_more, setup, teardown),
		cmocka_unit_test_setup_teardown(t_fs, setup, teardown),
		cmocka_unit_test_setup_teardown(t_procs, setup, teardown),
		cmocka_unit_test(t_json),
		cmocka_unit_test(t_ring),
		cmocka_unit_test(t_real),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
