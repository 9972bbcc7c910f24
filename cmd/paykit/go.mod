module github.com/paykit-dev/paykit-go/cmd/paykit

go 1.24

replace github.com/paykit-dev/paykit-go => ../..

require (
	github.com/paykit-dev/paykit-go v0.0.0
	github.com/shopspring/decimal v1.6.0
	github.com/spf13/cobra v1.10.1
	golang.org/x/sys v0.31.0
	golang.org/x/term v0.30.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
