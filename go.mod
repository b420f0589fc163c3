module github.com/glb-dns/glb

go 1.26.0
