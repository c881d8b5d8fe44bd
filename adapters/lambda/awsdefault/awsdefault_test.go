package awsdefault

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/geecache/geecache/adapters/lambda"
)

func TestInvokeAPI(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_REGION", "ap-south-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	c, err := InvokeAPI(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lambda.CloseIdleConnections(c)
	o := c.Options()
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
	if _, ok := o.HTTPClient.(interface{ CloseIdleConnections() }); !ok {
		t.Errorf("HTTP client %T cannot close its idle connections", o.HTTPClient)
	}
}
