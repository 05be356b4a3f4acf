package actors_test

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/sirupsen/logrus"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/actors/actortest"
	"github.com/retentionkit/retention/passes"
)

// TestRunsInTheCallersActorSystem embeds the runtime in a service's own actor system,
// with an actor of the service's as an observer, and leaves the system running on Stop.
func TestRunsInTheCallersActorSystem(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		system := actor.NewActorSystem()
		seen := make(chan actors.Event, 16)
		serviceActor := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			if e, ok := ctx.Message().(actors.Event); ok {
				seen <- e
			}
		}))
		clk := actortest.NewClock()
		quiet := logrus.New()
		quiet.SetOutput(io.Discard)
		rt := actors.New(actors.Config{System: system, Clock: clk, Logger: quiet, Observers: []actors.Observer{actors.ActorObserver(system, serviceActor)}})
		opts := passes.DefaultOptions()
		opts.RetentionPeriod, opts.MaxStartupStagger = passes.Retain(time.Hour), 0
		fake := actortest.NewFakePass(actortest.Rows(4))
		if err := rt.Register(passes.Registration{Name: "embedded", New: fake.Factory(), Options: opts}); err != nil {
			t.Fatal(err)
		}
		if err := rt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rt.System() != system {
			t.Fatal("the runtime made a system of its own")
		}
		synctest.Wait()
		var done *actors.SweepDone
		for len(seen) > 0 {
			if d, ok := (<-seen).(actors.SweepDone); ok {
				done = &d
			}
		}
		if done == nil || done.Rows != 4 {
			t.Fatalf("the service's actor heard no sweep done (got %+v)", done)
		}
		if err := rt.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The caller's system still works after the runtime stopped.
		reply, err := system.Root.RequestFuture(system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			if _, ok := ctx.Message().(string); ok {
				ctx.Respond("pong")
			}
		})), "ping", time.Second).Result()
		if err != nil || reply != "pong" {
			t.Fatalf("the caller's system after Stop: %v, %v", reply, err)
		}
		system.Root.Stop(serviceActor)
		time.Sleep(10 * time.Second) // bubble time: lets protoactor's own timers end
	})
}
