package provider

import (
	"errors"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/client"
)

// The kinds below follow glb's API document (api/openapi.json) member by
// member; their descriptions are the registry docs' text.

var zoneKind = kind{
	name: "zone", path: "/zones", byName: "name", dnsNames: []string{"name"},
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
	renamed:  map[string]string{"echo_count": "count"},
	zeros: []string{"send", "expect", "payload_encoding", "query_name", "query_type", "protocol", "expected_rcode",
		"expected_answer", "server_name", "min_days_valid", "starttls", "service", "tls", "echo_count", "max_loss",
		"ttl", "pool_label", "origin_label"},
	schema: schema.Schema{
		Description: "How a pool's origins are health-checked. Defaults are Cloudflare's; each left out takes the server's default.",
		Attributes: meta(map[string]schema.Attribute{
			"description":      optString("Free text; an import may name the monitor by it when no other monitor has it."),
			"type":             optString("`http` (default), `https`, `tcp`, `udp`, `dns`, `tls`, `smtp`, `grpc`, `icmp` or `feed` (results fed in by Alertmanager's webhook or a PUT, never probed)."),
			"method":           optString("HTTP method; default `GET`."),
			"path":             optString("HTTP path; default `/`."),
			"port":             optNumber("0: the type's default (http 80, https and tls 443, dns 53, smtp 25); tcp, udp and grpc need one; icmp has none."),
			"header":           headerAttr,
			"timeout":          optNumber("Seconds per attempt; default 5."),
			"interval":         optNumber("Seconds between checks; default 60."),
			"retries":          optNumber("Immediate re-attempts after a failure; default 2."),
			"expected_codes":   optString("`200`, `2xx`, or a comma-separated list of either; default `200`."),
			"expected_body":    optString("A substring the body must contain."),
			"follow_redirects": optBool("Follow HTTP redirects."),
			"allow_insecure":   optBool("Skip certificate verification (https, tls, smtp with starttls, grpc with tls)."),
			"consecutive_up":   optNumber("Checks in a row to turn up; 0 means 1. For feed monitors a check is a word fed in."),
			"consecutive_down": optNumber("Checks in a row to turn down; 0 means 1. For feed monitors a check is a word fed in."),
			"send":             optString("udp: the datagram sent."),
			"expect":           optString("udp: what the reply must contain."),
			"payload_encoding": optString("udp: `text` (default) or `hex`."),
			"query_name":       optString("dns: the name asked."),
			"query_type":       optString("dns: the type asked."),
			"protocol":         optString("dns: `udp` (default) or `tcp`."),
			"expected_rcode":   optString("dns: default `NOERROR`."),
			"expected_answer":  optString("dns: a substring of one answer record's data."),
			"server_name":      optString("tls, smtp with starttls and grpc with tls: SNI name and the name the certificate must carry; empty: the origin's address."),
			"min_days_valid":   optNumber("tls: down when the certificate expires within that many days."),
			"starttls":         optBool("smtp: upgrade with STARTTLS after EHLO."),
			"service":          optString("grpc: the service asked of `grpc.health.v1.Health/Check`; empty: the server's overall health."),
			"tls":              optBool("grpc: speak TLS, the certificate verified for `server_name` unless `allow_insecure`."),
			"echo_count":       optNumber("icmp: echo requests per attempt, at most 20; 0 means 3. The API's `count`, a name Terraform keeps for itself."),
			"max_loss":         optNumber("icmp: percent of the echo requests (0-99) that may go unanswered before the origin is down; default 0."),
			"ttl":              optNumber("feed: seconds a word fed in lasts when it gives none of its own (an Alertmanager webhook never does), at most 604800; 0 means 300."),
			"pool_label":       optString("feed: the alert label naming the pool (its id or name); empty means `glb_pool`."),
			"origin_label":     optString("feed: the alert label naming the origin; empty means `glb_origin`."),
		}),
	},
}

var poolKind = kind{
	name: "pool", path: "/pools", byName: "name",
	readOnly: metaReadOnly,
	zeros:    []string{"owner"},
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
				"by_load": schema.SingleNestedAttribute{Optional: true,
					Description: "Sheds by the load origins report through their feeds: an origin keeps its whole share up to `low`, falling linearly to none at `high` (unless every eligible origin is above it: fail open). Absent: loads are only shown.",
					Attributes: map[string]schema.Attribute{
						"low":  reqNumber("A load in [0, 1] at or below which an origin keeps its whole share."),
						"high": reqNumber("A load in [0, 1], above `low`, at or above which an origin takes no answer."),
					}},
			}),
			"rum": schema.SingleNestedAttribute{Optional: true, Description: "Real user measurement of the pool, for `measured_latency` steering: what the beacon times.",
				Attributes: map[string]schema.Attribute{
					"probe_url": reqString("Absolute http(s) URL of a small object the pool's origins serve; the beacon fetches it with a cache-busting query and times it."),
				}},
		}),
	},
}

var loadBalancerKind = kind{
	name: "load_balancer", path: "/load_balancers", byName: "name", dnsNames: []string{"name"},
	readOnly: metaReadOnly,
	zeros:    []string{"owner", "https.no_default_alpn", "https.port", "https.ech"},
	schema: schema.Schema{
		Description: "A hostname inside a zone whose answers glb steers among pools.",
		Attributes: meta(map[string]schema.Attribute{
			"zone":        reqString("The zone's id."),
			"name":        reqString("The fully qualified name, inside the zone."),
			"description": optString("Free text."),
			"enabled":     optBool("Default true."),
			"ttl":         optNumber("TTL of the answers; default 30."),
			"steering_policy": schema.StringAttribute{Optional: true, Computed: true,
				Description: "`off`, `geo`, `proximity`, `dynamic_latency`, `measured_latency` (by what real users measured, see `rum`) or `random`. Left out, the server chooses `geo` when `region_pools` or `country_pools` is set, else `off`."},
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
			"rum": schema.SingleNestedAttribute{Optional: true, Description: "Real user measurement: pages carrying the beacon report how long each pool's `rum.probe_url` took, and `measured_latency` steering ranks the default pools by those medians.",
				Attributes: map[string]schema.Attribute{
					"site_keys":       reqList(types.StringType, "Keys (8-64 of letters, digits, `-`, `_`; at most 8) a page's beacon names this load balancer with; public, they sit in the page."),
					"allowed_origins": optList(types.StringType, "Web origins (`scheme://host[:port]`, lower case) whose pages may post reports (CORS)."),
					"min_samples":     optNumber("Samples a pool needs at a level (resolver, network, asn, country, region) for its median to rank it; 0 (default): 20."),
				}},
		}),
	},
}

var networkKind = kind{
	name: "network", path: "/networks", byName: "cidr",
	readOnly: metaReadOnly,
	schema: schema.Schema{
		Description: "An operator's statement of where the clients of a prefix are: the fields it sets override GeoIP for addresses inside it.",
		Attributes: meta(map[string]schema.Attribute{
			"cidr":        reqString("The prefix without host bits, such as `198.51.100.0/24`; unique, and an import may name the network by it."),
			"description": optString("Free text."),
			"zone":        optString("The clients' zone label (zonal affinity)."),
			"region":      optString("A region code (`WEU`, `ENAM`...)."),
			"country":     optString("An ISO 3166-1 alpha-2 code."),
			"latitude":    optNumber("Set with longitude."),
			"longitude":   optNumber("Set with latitude."),
		}),
	},
}

// keyID is the id of an object the API names by its name.
func keyID(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// secretAttr is a secret the API shows in the create's answer only.
func secretAttr(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Sensitive: true, Description: desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

var tsigKeyKind = kind{
	name: "tsig_key", path: "/tsig_keys", key: "name", replaceOnly: true,
	readOnly: []string{"created_on"}, shownOnce: []string{"secret"},
	schema: schema.Schema{
		Description: "A TSIG key (RFC 8945) that signs DNS UPDATE messages and zone transfers. glbd generates the secret and shows it once: it is in the state of the apply that created the key (sensitive), and absent after an import. The API has no update: any change replaces the key, and so its secret.",
		Attributes: map[string]schema.Attribute{
			"id":        keyID("The key's name."),
			"name":      reqString("The key's DNS name as clients sign with it, lower case, no trailing dot."),
			"algorithm": optString("`hmac-sha256` (default) or `hmac-sha512`."),
			"grants": schema.ListNestedAttribute{Required: true, Description: "What the key may change by UPDATE; empty: it only signs zone transfers.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"zone":  reqString("The zone's id."),
					"name":  reqString("A name inside the zone."),
					"match": reqString("`exact`, `subtree` or `acme-challenge`."),
					"types": reqList(types.StringType, "Record types the key may add or delete there."),
				}}},
			"created_on": schema.StringAttribute{Computed: true, Description: "When the key was created.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"secret": secretAttr("The base64 secret, as `nsupdate -y hmac-sha256:NAME:SECRET` takes it."),
		},
	},
}

var tokenKind = kind{
	name: "token", path: "/tokens", key: "name", replaceOnly: true,
	readOnly: []string{"created_on", "last_used_on"}, shownOnce: []string{"secret"},
	schema: schema.Schema{
		Description: "A named, scoped API token. The secret is shown once, in the state of the apply that created it (sensitive); the API has no update: any change replaces the token, and so its secret.",
		Attributes: map[string]schema.Attribute{
			"id":         keyID("The token's name."),
			"name":       reqString("Unique; the actor in the audit log."),
			"scopes":     reqList(types.StringType, "Of `read`, `write`, `integrations`, `admin`, `feed`."),
			"expires_on": optString("RFC 3339; absent: never expires."),
			"zones":      optList(types.StringType, "Zone ids: the token then reaches only these zones and what they use."),
			"created_on": schema.StringAttribute{Computed: true, Description: "When the token was created.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"last_used_on": schema.StringAttribute{Computed: true, Description: "Last use, recorded at most once a minute."},
			"secret":       secretAttr("The bearer secret."),
		},
	},
}

var notificationKind = kind{
	name: "notification", path: "/notifications", byName: "name",
	readOnly: []string{"created_on", "modified_on"}, shownOnce: []string{"secret", "routing_key"},
	schema: schema.Schema{
		Description: "A subscription that sends glb's events to a URL (standard webhooks, Slack or PagerDuty). Needs the `integrations` or `admin` scope. The signing secret of a standard subscription is shown once (sensitive). The API keeps no revision of a subscription (no `ETag`, and `PUT` takes no `If-Match`): an update replaces it whatever was written since the refresh, unlike the other resources.",
		Attributes: map[string]schema.Attribute{
			"id":     schema.StringAttribute{Computed: true, Description: "The subscription's id.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name":   reqString("The subscription's name; an import may name it by it."),
			"url":    reqString("`http` or `https`, where the nodes may send requests."),
			"events": reqList(types.StringType, "Of `origin_health`, `pool_health`, `failover`, `shift`, `config`, `dnssec`, `node`, `rollout`."),
			"format": schema.StringAttribute{Optional: true, Computed: true, Description: "`standard` (default), `slack` or `pagerduty`; it cannot change in place.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}},
			"load_balancers": optList(types.StringType, "Load balancer ids: only events that concern one of them."),
			"pools":          optList(types.StringType, "Pool ids: only events that concern one of them."),
			"routing_key":    schema.StringAttribute{Optional: true, Sensitive: true, Description: "pagerduty: the service's integration key."},
			"created_on": schema.StringAttribute{Computed: true, Description: "When it was created.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"modified_on": schema.StringAttribute{Computed: true, Description: "When it was last written."},
			"secret":      secretAttr("standard format: the Standard Webhooks signing secret."),
		},
	},
}

var shiftKind = kind{
	name: "shift", path: "/shifts", replaceOnly: true,
	readOnly: append([]string{"status", "ended_at", "overridden"}, metaReadOnly...),
	gone: func(err error) bool {
		var e *client.Error
		return errors.As(err, &e) && e.Status == http.StatusBadRequest // ended or expired already
	},
	schema: schema.Schema{
		Description: "Takes traffic away from a pool, an origin or a zone for a while, and ends by itself at `expires_at`. Destroying it ends it early; one that has expired stays in the state (status `expired`) and is not made again. The API has no update: any change replaces the shift.",
		Attributes: meta(map[string]schema.Attribute{
			"target": schema.SingleNestedAttribute{Required: true, Description: "Exactly one of `pool`, `origin` or `zone`.",
				Attributes: map[string]schema.Attribute{
					"pool":   schema.StringAttribute{Optional: true, Description: "A pool id."},
					"origin": schema.StringAttribute{Optional: true, Description: "`pool-id/origin-name`."},
					"zone":   schema.StringAttribute{Optional: true, Description: "An origin zone label: its origins in every pool."},
				}},
			"load_balancers": optList(types.StringType, "Load balancer ids it applies to; absent: every one."),
			"reason":         reqString("Why, for the audit log and the console."),
			"duration":       optString("`90s`, `2h`, `3d` (at most 7 days): sets `expires_at` from `starts_at`. Give it or `expires_at`."),
			"starts_at":      optString("RFC 3339; default now, a later time schedules the shift."),
			"expires_at":     optString("RFC 3339: when it ends by itself."),
			"override":       optBool("Admin only: start it although it breaks safety rules (audited)."),
			"overridden":     schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "The safety rules an override broke."},
			"ended_at":       schema.StringAttribute{Computed: true, Description: "When a destroy (DELETE) ended it early."},
			"status":         schema.StringAttribute{Computed: true, Description: "`scheduled`, `active`, `ended` or `expired`, at the server's clock when last read."},
		}),
	},
}

var safetyRulesKind = kind{
	name: "safety_rules", path: "/safety/rules", singleton: "global",
	readOnly: []string{"revision", "modified_on"},
	reset:    map[string]any{"max_shifted_zones": 0, "max_shifted_pools": 0, "min_serving_load_balancers_percent": 0},
	schema: schema.Schema{
		Description: "The global shift safety rules, which hold across every load balancer. There is one set: import it as `global`; destroying the resource turns every rule off (0). Needs the `admin` scope.",
		Attributes: map[string]schema.Attribute{
			"id":                                 keyID("Always `global`."),
			"max_shifted_zones":                  optNumber("Distinct zones shifted at once at most; 0 (default): no limit."),
			"max_shifted_pools":                  optNumber("Distinct pools shifted at once at most; 0 (default): no limit."),
			"min_serving_load_balancers_percent": optNumber("Share (0-100) of the load balancers with steering pools that must keep one serving; 0 (default): off."),
			"revision":                           schema.NumberAttribute{Computed: true, Description: "The revision of the last write, its ETag (`If-Match`)."},
			"modified_on":                        schema.StringAttribute{Computed: true, Description: "When the rules were last written."},
		},
	},
}
