package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestConfigXDP(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("glbd", nil, env(map[string]string{"GLB_XDP_INTERFACE": "eth0, eth1", "GLB_XDP_REQUIRED": "true"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := commaList(c.XDPInterface); !slices.Equal(got, []string{"eth0", "eth1"}) || !c.XDPRequired {
		t.Errorf("from the environment: interfaces %q, required %v", got, c.XDPRequired)
	}
	c, err = parseConfig("glbd", []string{"--xdp-interface", "eth2", "--xdp-required=false"}, env(map[string]string{"GLB_XDP_INTERFACE": "eth0", "GLB_XDP_REQUIRED": "true"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.XDPInterface != "eth2" || c.XDPRequired {
		t.Errorf("flags over the environment: %q, required %v", c.XDPInterface, c.XDPRequired)
	}
	if c, _ := parseConfig("glbd", nil, env(nil), io.Discard); c.XDPInterface != "" || c.XDPRequired {
		t.Errorf("default: %q, required %v; want off", c.XDPInterface, c.XDPRequired)
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--xdp-required"}, nil, "--xdp-required: set --xdp-interface too"},
		{nil, map[string]string{"GLB_XDP_REQUIRED": "maybe"}, `GLB_XDP_REQUIRED "maybe"`},
	} {
		if _, err := parseConfig("glbd", bad.args, env(bad.env), io.Discard); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v %v: %v, want an error with %q", bad.args, bad.env, err, bad.want)
		}
	}
}
