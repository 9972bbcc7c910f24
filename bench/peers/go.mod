module github.com/paykit-dev/paykit-go/bench/peers

go 1.26.0

require (
	github.com/google/go-github/v92 v92.0.0
	github.com/paykit-dev/paykit-go v0.0.0-20261128134203-6ae4c2a458d9
	github.com/shopspring/decimal v1.6.0
	github.com/stripe/stripe-go/v85 v85.0.0
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
)
