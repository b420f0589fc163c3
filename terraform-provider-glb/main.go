// Command terraform-provider-glb is glb's Terraform and OpenTofu provider,
// started by terraform or tofu as a plugin.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/glb-dns/glb/terraform-provider-glb/internal/provider"
)

// version is set at release builds (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/glb-dns/glb",
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
