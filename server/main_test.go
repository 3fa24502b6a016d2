package server_test

import (
	"testing"

	"petstore/models/modelstest"
)

func TestMain(m *testing.M) { modelstest.Main(m) }
