package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The kinds below follow glb's API document (api/openapi.json) member by
// member; their descriptions are the registry docs' text.

var zoneKind = kind{
	name: "zone", path: "/zones", byName: "name",
	readOnly: append([]string{"serial"}, metaReadOnly...),
	schema: schema.Schema{
		Description: "A DNS zone glb serves authoritatively: its nameservers, SOA, static records, DNSSEC and zone transfers. Load balancers (`glb_load_balancer`) answer names inside it.",
		Attributes: meta(map[string]schema.Attribute{
			"name":        reqString("The apex, such as `glb.example.com`."),
			"nameservers": reqList(types.StringType, "The zone's NS records, at least one."),
			"soa": optObject("The SOA fields other than the serial; each left out takes the server's default.", map[string]schema.Attribute{
				"mname":   optString("The primary nameserver (default: the first of `nameservers`)."),
				"rname":   optString("The mailbox of the person responsible, as a name (`hostmaster.example.com`)."),
				"refresh": optNumber("Seconds; default 14400."),
				"retry":   optNumber("Seconds; default 3600."),
				"expire":  optNumber("Seconds; default 604800."),
				"minimum": optNumber("Negative caching TTL in seconds; default 300."),
			}),
			"ttl": optNumber("TTL of the apex records and of static records that set none; default 300."),
			"records": optObjects("Static records, in the order given.", map[string]schema.Attribute{
				"name":    reqString("The owner name, inside the zone."),
				"type":    reqString("The type's mnemonic (`A`, `TXT`, `HTTPS`...)."),
				"content": reqString("The data in presentation format."),
				"ttl":     defNumber("0 (default): the zone's `ttl`.", 0),
				"owner":   defString("A free label naming the tool that manages the record.", ""),
			}),
			"serial": schema.NumberAttribute{Computed: true, Description: "The SOA serial, advanced by the server on every change to the zone or to a load balancer in it."},
			"dnssec": optObject("Online DNSSEC signing.", map[string]schema.Attribute{
				"enabled": optBool("Sign the zone's answers (default false). The DS to give the parent is the `glb_dnssec_ds` data source."),
			}),
			"transfer": schema.SingleNestedAttribute{Optional: true, Description: "Lets secondaries follow the zone (AXFR, IXFR, NOTIFY); absent: none may.",
				Attributes: map[string]schema.Attribute{
					"allow":        optList(types.StringType, "Networks (CIDR) or addresses that may transfer the zone."),
					"tsig_keys":    optList(types.StringType, "Names of TSIG keys a request must be signed with; NOTIFY is signed with the first."),
					"notify":       optList(types.StringType, "Secondaries told of every change, `addr:port`."),
					"min_interval": optNumber("Least seconds between two changes health alone makes; 0 means 5."),
				}},
		}),
	},
}

var headerAttr = optMap(stringList, "Request headers, each name to its values.")

var monitorKind = kind{
	name: "monitor", path: "/monitors", byName: "description",
	readOnly: metaReadOnly,
	schema: schema.Schema{
		Description: "How a pool's origins are health-checked. Defaults are Cloudflare's; each left out takes the server's default.",
		Attributes: meta(map[string]schema.Attribute{
			"description":      optString("Free text; an import may name the monitor by it when no other monitor has it."),
			"type":             optString("`http` (default), `https`, `tcp`, `udp`, `dns`, `tls` or `smtp`."),
			"method":           optString("HTTP method; default `GET`."),
			"path":             optString("HTTP path; default `/`."),
			"port":             optNumber("0: the scheme's default (80, 443); tcp needs one."),
			"header":           headerAttr,
			"timeout":          optNumber("Seconds per attempt; default 5."),
			"interval":         optNumber("Seconds between checks; default 60."),
			"retries":          optNumber("Immediate re-attempts after a failure; default 2."),
			"expected_codes":   optString("`200`, `2xx`, or a comma-separated list of either; default `200`."),
			"expected_body":    optString("A substring the body must contain."),
			"follow_redirects": optBool("Follow HTTP redirects."),
			"allow_insecure":   optBool("Skip certificate verification."),
			"consecutive_up":   optNumber("Checks in a row to turn up; 0 means 1."),
			"consecutive_down": optNumber("Checks in a row to turn down; 0 means 1."),
			"send":             optString("udp: the datagram sent."),
			"expect":           optString("udp: what the reply must contain."),
			"payload_encoding": optString("udp: `text` (default) or `hex`."),
			"query_name":       optString("dns: the name asked."),
			"query_type":       optString("dns: the type asked."),
			"protocol":         optString("dns: `udp` (default) or `tcp`."),
			"expected_rcode":   optString("dns: default `NOERROR`."),
			"expected_answer":  optString("dns: a substring of one answer record's data."),
			"server_name":      optString("tls: SNI name and the name the certificate must carry."),
			"min_days_valid":   optNumber("tls: down when the certificate expires within that many days."),
			"starttls":         optBool("smtp: upgrade with STARTTLS after EHLO."),
		}),
	},
}

var poolKind = kind{
	name: "pool", path: "/pools", byName: "name",
	readOnly: metaReadOnly,
	schema: schema.Schema{
		Description: "A group of origins that load balancers answer with, checked by a monitor or a monitor group.",
		Attributes: meta(map[string]schema.Attribute{
			"name":            reqString("The pool's name."),
			"description":     optString("Free text."),
			"enabled":         optBool("A disabled pool takes no traffic; default true."),
			"minimum_origins": optNumber("Healthy origins the pool needs to be healthy; default 1."),
			"monitor":         optString("A monitor id; empty: origins are not checked. Short for a `monitors` group of that one monitor, `must_be_healthy`."),
			"monitors": optObjects("A monitor group: an origin is up when every `must_be_healthy` monitor sees it up and, when the group has other deciding monitors, at least one of them does.", map[string]schema.Attribute{
				"monitor":         reqString("A monitor id."),
				"must_be_healthy": defBool("An origin this monitor sees down is down; default false.", false),
				"monitoring_only": defBool("Checked and shown, never part of the decision; default false.", false),
			}),
			"check_regions": optList(types.StringType, "Regions whose nodes check the origins."),
			"latitude":      optNumber("For proximity steering."),
			"longitude":     optNumber("For proximity steering."),
			"origin_steering": optObject("How an origin is chosen among the eligible ones.", map[string]schema.Attribute{
				"policy": optString("`random` (default, by weight) or `hash` (by client subnet)."),
			}),
			"origins": schema.ListNestedAttribute{Required: true, Description: "The pool's servers, at least one.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    reqString("The origin's name, unique in the pool."),
					"address": reqString("An IPv4 or IPv6 address, or a hostname (answered as a CNAME)."),
					"enabled": defBool("Default true.", true),
					"weight":  defNumber("A share in [0, 1]; default 1. An origin gets its weight over the sum of the eligible origins' weights.", 1),
					"zone":    defString("A free label matched against the client's zone for zonal affinity.", ""),
					"header":  headerAttr,
					"owner":   defString("A free label naming the tool that manages the origin.", ""),
				}}},
			"owner": optString("A free label naming the tool that manages the pool."),
			"load_shedding": optObject("Moves a share of the traffic that would come to this pool on to the next candidate.", map[string]schema.Attribute{
				"default_percent": optNumber("Percent of the queries shed; default 0."),
				"default_policy":  optString("`random` (default) or `hash` (by client subnet, so a client sticks)."),
			}),
		}),
	},
}

var loadBalancerKind = kind{
	name: "load_balancer", path: "/load_balancers", byName: "name",
	readOnly: metaReadOnly,
	schema: schema.Schema{
		Description: "A hostname inside a zone whose answers glb steers among pools.",
		Attributes: meta(map[string]schema.Attribute{
			"zone":        reqString("The zone's id."),
			"name":        reqString("The fully qualified name, inside the zone."),
			"description": optString("Free text."),
			"enabled":     optBool("Default true."),
			"ttl":         optNumber("TTL of the answers; default 30."),
			"steering_policy": schema.StringAttribute{Optional: true, Computed: true,
				Description: "`off`, `geo`, `proximity`, `dynamic_latency` or `random`. Left out, the server chooses `geo` when `region_pools` or `country_pools` is set, else `off`."},
			"default_pools": reqList(types.StringType, "Pool ids in failover order."),
			"fallback_pool": reqString("The pool answered when every candidate is down (the `all_down` default)."),
			"region_pools":  optMap(stringList, "Region code to pool ids in order (geo steering)."),
			"country_pools": optMap(stringList, "ISO 3166-1 alpha-2 country code to pool ids in order (geo steering)."),
			"random_steering": optObject("Pool weights of random steering.", map[string]schema.Attribute{
				"default_weight": optNumber("Weight of a pool not in `pool_weights`; default 1."),
				"pool_weights":   optMap(types.NumberType, "Pool id to weight."),
			}),
			"location_strategy": optObject("Where the client's location comes from.", map[string]schema.Attribute{
				"prefer_ecs": optString("When EDNS Client Subnet is trusted over the resolver's address: `auto` (default), `always`, `never`, `proximity` or `geo`."),
			}),
			"zonal_affinity": optObject("Keeps clients on origins of their own zone.", map[string]schema.Attribute{
				"spillover":       optString("`ZONAL_AFFINITY_DISABLED` (default), `ZONAL_AFFINITY_STAY_WITHIN_ZONE` or `ZONAL_AFFINITY_SPILL_CROSS_ZONE`."),
				"spillover_ratio": optNumber("Spill to other zones when the healthy share of the client's zone falls below it."),
			}),
			"answers": optNumber("Origin records per answer; 0: every eligible one; default 1."),
			"owner":   optString("A free label naming the tool that manages the load balancer."),
			"all_down": optObject("What is answered when no steering pool serves.", map[string]schema.Attribute{
				"action":    optString("`fallback` (default: the fallback pool, whatever its health), `nodata`, `refused` or `addresses`."),
				"addresses": optList(types.StringType, "With `addresses`: the fixed addresses answered."),
			}),
			"safety": optObject("The rules a shift must keep for this load balancer.", map[string]schema.Attribute{
				"min_serving_pools": optNumber("Steering pools that must stay serving; default 1, 0 turns the rule off."),
				"max_shifted_zones": optNumber("Zones shifted at once at most; 0 (default) sets no limit."),
			}),
			"https": schema.SingleNestedAttribute{Optional: true, Description: "Answers HTTPS queries for the name with one record whose hints are the chosen origins.",
				Attributes: map[string]schema.Attribute{
					"alpn":            optList(types.StringType, "Protocol ids the origins speak (`h2`, `h3`)."),
					"no_default_alpn": optBool("The origins do not speak http/1.1."),
					"port":            optNumber("The origins' port when not 443."),
					"ech":             optString("An ECHConfigList in base64."),
				}},
		}),
	},
}
