//go:build !js

package lambda

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The credentials and time of the AWS Signature Version 4 test suite.
const (
	suiteKeyID  = "AKIDEXAMPLE"
	suiteSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	suiteDate   = "20150830T123600Z"
)

// refSign computes a SigV4 Authorization header from the specification
// (canonical request, string to sign, derived key), independently of the
// SDK, for a request without a body signed at suiteDate: every header
// given is signed, and each path segment, already escaped, is escaped once
// more, as for every service but S3.
func refSign(method, host, escapedPath string, hdr map[string]string, region, service string) string {
	return refSignAt(method, host, escapedPath, hdr, region, service, suiteDate, nil)
}

// refSignAt is refSign for a request signed at date (in X-Amz-Date's
// format) with body as its payload.
func refSignAt(method, host, escapedPath string, hdr map[string]string, region, service, date string, body []byte) string {
	hdr["host"] = host
	hdr["x-amz-date"] = date
	var names []string
	for k := range hdr {
		names = append(names, k)
	}
	sort.Strings(names)
	var canonHdr strings.Builder
	for _, k := range names {
		canonHdr.WriteString(k + ":" + strings.TrimSpace(hdr[k]) + "\n")
	}
	signed := strings.Join(names, ";")
	var uri strings.Builder
	for i, seg := range strings.Split(escapedPath, "/") {
		if i > 0 {
			uri.WriteByte('/')
		}
		for _, b := range []byte(seg) {
			if 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || strings.IndexByte("-_.~", b) >= 0 {
				uri.WriteByte(b)
			} else {
				uri.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{b})))
			}
		}
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	canon := strings.Join([]string{method, uri.String(), "", canonHdr.String(), signed, sum(string(body))}, "\n")
	scope := date[:8] + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + date + "\n" + scope + "\n" + sum(canon)
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	key := mac(mac(mac(mac([]byte("AWS4"+suiteSecret), date[:8]), region), service), "aws4_request")
	return "AWS4-HMAC-SHA256 Credential=" + suiteKeyID + "/" + scope + ", SignedHeaders=" + signed +
		", Signature=" + hex.EncodeToString(mac(key, toSign))
}

// TestRefSignMatchesSuite checks the reference signer against the
// "get-vanilla" case of AWS's published SigV4 test suite.
func TestRefSignMatchesSuite(t *testing.T) {
	got := refSign("GET", "example.amazonaws.com", "/", map[string]string{}, "us-east-1", "service")
	want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
		"SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	if got != want {
		t.Fatalf("reference signer:\n got %s\nwant %s", got, want)
	}
}

// TestSigV4TransportFixedVector: a peer request for a key that needs
// escaping, signed by the transport at a fixed time, carries exactly the
// Authorization header the specification gives for service "lambda".
func TestSigV4TransportFixedVector(t *testing.T) {
	synctest.Test(t, testSigV4TransportFixedVector)
}

func testSigV4TransportFixedVector(t *testing.T) {
	at, _ := time.Parse("20060102T150405Z", suiteDate)
	time.Sleep(time.Until(at)) // the bubble's clock, now at the suite's date
	var got http.Header
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, host = r.Header.Clone(), r.Host
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set(protocol.HeaderChecksum, protocol.Checksum([]byte("630")))
		_, _ = w.Write([]byte("630"))
	}))
	defer srv.Close()
	base := nethttp.NewTransport()
	defer base.CloseIdleConnections()
	tr, err := NewSigV4Transport(&SigV4Options{
		Credentials: credentials.NewStaticCredentialsProvider(suiteKeyID, suiteSecret, ""),
		Region:      "eu-west-1", Base: base,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := nethttp.NewClient(srv.URL, &nethttp.ClientOptions{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := peertest.Get(t.Context(), c, "scores", "a/b c%"); err != nil || string(v) != "630" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	// The headers a peer request carries, from the protocol itself.
	preq := protoClient(t, nil).NewRequest(t.Context(), srv.URL, "scores", "a/b c%", false)
	hdr := map[string]string{}
	for k, vs := range preq.Header {
		hdr[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	want := refSign("GET", host, preq.Path, hdr, "eu-west-1", "lambda")
	if a := got.Get("Authorization"); a != want {
		t.Fatalf("Authorization:\n got %s\nwant %s", a, want)
	}
	if got.Get("X-Amz-Date") != suiteDate {
		t.Errorf("X-Amz-Date = %q", got.Get("X-Amz-Date"))
	}
}

// A node with GEECACHE_URL_AUTH=AWS_IAM signs its requests to peers named
// by URL with the environment's credentials, for service lambda.
func TestNodeSignsURLPeers(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", suiteKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", suiteSecret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	auth := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case auth <- r.Header.Get("Authorization"):
		default:
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set(protocol.HeaderChecksum, protocol.Checksum([]byte("v")))
		_, _ = w.Write([]byte("v"))
	}))
	defer srv.Close()
	cfg, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "node-a", envPeers: "node-a," + srv.URL, envURLAuth: "aws_iam"}))
	if err != nil {
		t.Fatal(err)
	}
	var g *cache.Group
	n, err := NewNode(cfg, func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
		g, err = reg.NewGroup("g", 1<<20, getter.Map(nil), &cache.GroupOptions{Peers: peers})
		return err
	}, &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprint("k", i); n.Peers.Owner(k) == srv.URL {
			key = k
		}
	}
	if v, err := g.Get(t.Context(), key); err != nil || v.String() != "v" {
		t.Fatalf("Get = %q, %v", v.String(), err)
	}
	if a := <-auth; !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential="+suiteKeyID+"/") || !strings.Contains(a, "/eu-west-1/lambda/aws4_request") {
		t.Fatalf("Authorization = %q", a)
	}
	if _, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a", envURLAuth: "IAM"})); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("GEECACHE_URL_AUTH=IAM: %v, want cache.ErrConfig", err)
	}
}
