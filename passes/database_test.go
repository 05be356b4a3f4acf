package passes

import (
	"context"
	"strings"
	"testing"
)

func TestOpenRefusesAnUnknownDriver(t *testing.T) {
	_, err := Open(context.Background(), "oracle", "x")
	if err == nil || !strings.Contains(err.Error(), `"oracle"`) {
		t.Fatalf("Open = %v", err)
	}
}
