module github.com/geecache/geecache

go 1.26

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/golang/mock v1.6.0
	go.uber.org/goleak v1.3.0
)
