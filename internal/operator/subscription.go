package operator

import (
	"fmt"

	"github.com/google/uuid"
)

// checkSubscription insists on what ARM hands out: a UUID in its
// canonical 8-4-4-4-12 form.
func CheckSubscription(field, v string) error {
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return fmt.Errorf("%s %q: a subscription ID is a UUID such as 1d3378d3-5a3f-4712-85a1-2485495dfc4b", field, v)
	}
	return nil
}
