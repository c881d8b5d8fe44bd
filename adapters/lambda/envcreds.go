//go:build !js

package lambda

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// envCredentials provides the AWS credentials in the environment variables
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, the first
// source of the SDK's default chain. Lambda sets them to the execution
// role's credentials for the life of each execution environment, so a node
// on Lambda needs nothing else; the rest of the chain is in package
// awsdefault. It reads them on every Retrieve (wrap it in an
// aws.CredentialsCache, as newInvokeAPI does).
type envCredentials struct{}

// errNoCredentials is returned by envCredentials.Retrieve when the
// environment has no credentials.
var errNoCredentials = errors.New("geecache: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")

// Retrieve returns the credentials in the environment.
func (envCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Credentials{}, errNoCredentials
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Source: "EnvCredentials"}, nil
}

// envRegion returns AWS_REGION, or AWS_DEFAULT_REGION.
func envRegion() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return os.Getenv("AWS_DEFAULT_REGION")
}
