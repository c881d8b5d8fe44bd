//go:build !js

package awsdefault

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"
)

// Config reads the region and credentials of the environment, turns the
// SDK's retries off, and gives a Lambda client an HTTP client whose idle
// connections can be closed (as lambda.Peers.Close does).
func TestConfig(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_REGION", "ap-south-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	cfg, err := Config(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	o := awsl.NewFromConfig(cfg).Options()
	if o.Region != "ap-south-1" {
		t.Errorf("region %q", o.Region)
	}
	if _, ok := o.Retryer.(aws.NopRetryer); !ok {
		t.Errorf("retryer %T, want none", o.Retryer)
	}
	creds, err := o.Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" {
		t.Errorf("credentials %+v, %v", creds, err)
	}
	hc, ok := o.HTTPClient.(interface{ CloseIdleConnections() })
	if !ok {
		t.Fatalf("HTTP client %T cannot close its idle connections", o.HTTPClient)
	}
	hc.CloseIdleConnections()
}
