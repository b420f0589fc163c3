package main

import (
	"fmt"
	"github.com/miekg/dns"
)

func main() {
	rr, _ := dns.NewRR("ipsec.x. IN IPSECKEY 10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==")
	g := new(dns.RFC3597)
	g.ToRFC3597(rr)
	fmt.Println(len(g.Rdata)/2, g.Rdata)
}
