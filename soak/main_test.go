package soak

import (
	"os"
	"testing"

	"github.com/hcpops/hcpops/core/store/cosmos/cosmostest"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }
