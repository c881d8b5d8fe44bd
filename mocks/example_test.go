package mocks_test

import (
	"context"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/mocks"
	"github.com/golang/mock/gomock"
)

// printReporter stands in for the *testing.T a real test passes to
// gomock.NewController.
type printReporter struct{}

func (printReporter) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }
func (printReporter) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// A test of code that uses a Group can script where keys live and what the
// owner answers: here the owner peer has Tom, and the local source must not
// be asked.
func Example() {
	ctrl := gomock.NewController(printReporter{}) // in a test: gomock.NewController(t)
	defer ctrl.Finish()

	owner := mocks.NewMockPeer(ctrl)
	owner.EXPECT().Addr().Return("http://10.0.0.2:8001").AnyTimes() // the group names its peers so
	tom := cache.PeerRequest{Op: cache.OpGet, Group: "scores", Keys: []string{"Tom"}}
	owner.EXPECT().Do(gomock.Any(), tom, gomock.Any()).DoAndReturn(
		func(_ context.Context, _ cache.PeerRequest, reply cache.PeerReply) error {
			reply.Answer(0, cache.ByteViewOf([]byte("630")), time.Minute, nil)
			return nil
		})
	peers := mocks.NewMockPeerPicker(ctrl)
	peers.EXPECT().PickPeer("Tom").Return(owner, true)
	source := mocks.NewMockGetter(ctrl) // no EXPECT: a local load would fail the test

	g, _ := cache.NewRegistry().NewGroup("scores", 1<<20, source, &cache.GroupOptions{Peers: peers})
	v, err := g.Get(context.Background(), "Tom")
	fmt.Println(v, err, g.Stats().PeerLoads)

	var _ getter.Getter = source
	// Output: 630 <nil> 1
}
