module github.com/paykit-dev/paykit-go

go 1.24

require (
	github.com/google/uuid v1.6.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/shopspring/decimal v1.6.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
