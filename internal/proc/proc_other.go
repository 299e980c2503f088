//go:build !linux

package proc

// ReadStat reports ErrUnsupported: there is no /proc here.
func ReadStat(int) (Stat, error) { return Stat{}, ErrUnsupported }

// StartTime reports ErrUnsupported: there is no /proc here.
func StartTime(int) (uint64, error) { return 0, ErrUnsupported }

// All reports ErrUnsupported: there is no /proc here.
func All() ([]Stat, error) { return nil, ErrUnsupported }

// Children reports ErrUnsupported: there is no /proc here.
func Children(int) ([]int, error) { return nil, ErrUnsupported }

// MarkerOf finds nothing: there is no /proc here.
func MarkerOf(int) (string, bool) { return "", false }

// Members reports ErrUnsupported: there is no /proc here.
func Members(Owner) ([]Stat, error) { return nil, ErrUnsupported }
