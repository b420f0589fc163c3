// SPDX-License-Identifier: GPL-2.0
//
// The XDP program of glbd's AF_XDP path: UDP datagrams to the DNS port
// and one of the served addresses go to the AF_XDP socket of the receive
// queue they arrived on; everything else, and everything the user-space
// side does not parse (fragments, IPv4 options, IPv6 extension headers,
// inconsistent lengths), goes on to the kernel, whose socket path
// answers it. Built by `make xdp-object` (clang), committed as
// redirect_bpfel.o so that building glbd needs no clang.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_UDP 17
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF

struct eth {
	__u8 dst[6];
	__u8 src[6];
	__u16 proto;
};

struct ip4 {
	__u8 vihl;
	__u8 tos;
	__u16 len;
	__u16 id;
	__u16 frag;
	__u8 ttl;
	__u8 proto;
	__u16 check;
	__u32 src;
	__u32 dst;
};

struct ip6 {
	__u32 vtcfl;
	__u16 plen;
	__u8 next;
	__u8 hops;
	__u8 src[16];
	__u8 dst[16];
};

struct udp {
	__u16 sport;
	__u16 dport;
	__u16 len;
	__u16 check;
};

// Set by the loader before the program is loaded.
volatile const __u16 dns_port; // host order
volatile const __u8 any4;      // every IPv4 destination is served
volatile const __u8 any6;      // every IPv6 destination is served

// The served addresses, IPv4 ones as IPv4-mapped IPv6.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u8[16]);
	__type(value, __u8);
} addrs SEC(".maps");

// The AF_XDP socket of each receive queue.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

// What was left to the kernel although addressed to the DNS port.
enum {
	PASS_FRAGMENT,  // a fragment (the kernel reassembles it); IPv6 ones whatever their port
	PASS_OPTIONS,   // IPv4 options
	PASS_MALFORMED, // lengths that do not add up (the kernel drops it)
	PASS_REASONS,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PASS_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} passed SEC(".maps");

static __always_inline int pass(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&passed, &reason);
	if (n)
		*n += 1;
	return XDP_PASS;
}

SEC("xdp")
int glb_dns(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct eth *eth = data;
	struct udp *udp;
	__u8 key[16] = {};
	__u16 iplen, udplen;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->proto == bpf_htons(ETH_P_IP)) {
		struct ip4 *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->proto != IPPROTO_UDP)
			return XDP_PASS;
		if ((ip->vihl & 0x0f) != 5 || (ip->vihl >> 4) != 4) {
			__u32 ihl = (ip->vihl & 0x0f) * 4;
			if (ihl < sizeof(*ip) || (ip->vihl >> 4) != 4)
				return XDP_PASS;
			udp = (void *)ip + ihl;
			if ((void *)(udp + 1) <= end && (ip->frag & bpf_htons(IP_OFFSET)) == 0 &&
			    udp->dport == bpf_htons(dns_port))
				return pass(PASS_OPTIONS);
			return XDP_PASS;
		}
		udp = (void *)(ip + 1);
		if (ip->frag & bpf_htons(IP_MF | IP_OFFSET)) {
			// A later fragment has no UDP header to tell the port:
			// every fragment goes to the kernel, which reassembles.
			return pass(PASS_FRAGMENT);
		}
		if ((void *)(udp + 1) > end || udp->dport != bpf_htons(dns_port))
			return XDP_PASS;
		if (!any4) {
			key[10] = 0xff;
			key[11] = 0xff;
			__builtin_memcpy(&key[12], &ip->dst, 4);
			if (!bpf_map_lookup_elem(&addrs, key))
				return XDP_PASS;
		}
		iplen = bpf_ntohs(ip->len);
		udplen = bpf_ntohs(udp->len);
		if (iplen < sizeof(*ip) + sizeof(*udp) || (void *)ip + iplen > end ||
		    udplen != iplen - sizeof(*ip))
			return pass(PASS_MALFORMED);
	} else if (eth->proto == bpf_htons(ETH_P_IPV6)) {
		struct ip6 *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return XDP_PASS;
		udp = (void *)(ip + 1);
		if (ip->next != IPPROTO_UDP) {
			// Extension headers are the kernel's to walk. Only a
			// fragment header is counted: other headers (MLD's
			// hop-by-hop option) come with traffic of every kind.
			if (ip->next == 44)
				return pass(PASS_FRAGMENT);
			return XDP_PASS;
		}
		if ((void *)(udp + 1) > end || udp->dport != bpf_htons(dns_port))
			return XDP_PASS;
		if (!any6) {
			__builtin_memcpy(key, ip->dst, 16);
			if (!bpf_map_lookup_elem(&addrs, key))
				return XDP_PASS;
		}
		udplen = bpf_ntohs(udp->len);
		iplen = bpf_ntohs(ip->plen);
		if (udplen < sizeof(*udp) || udplen != iplen || (void *)udp + udplen > end)
			return pass(PASS_MALFORMED);
	} else {
		return XDP_PASS;
	}
	// A queue without a socket leaves the packet to the kernel.
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
