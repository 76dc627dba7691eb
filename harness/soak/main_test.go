package soak

import (
	"os"
	"testing"

	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }
