package nccl

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Size units follow nccl-tests' parsesize: K, M or G (either case) are
// 1024, 1024² or 1024³.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

// ParseSize reads a message size such as "512K", "4M", "1G" or "1048576".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size is empty: write bytes or a number with K, M or G, e.g. 512K")
	}
	mult := int64(1)
	switch t[len(t)-1] {
	case 'K', 'k':
		mult = KiB
	case 'M', 'm':
		mult = MiB
	case 'G', 'g':
		mult = GiB
	}
	num := t
	if mult != 1 {
		num = t[:len(t)-1]
	}
	if strings.HasSuffix(strings.ToUpper(t), "B") {
		return 0, fmt.Errorf("size %q: write 512K, not 512KiB or 512KB (nccl-tests' units are K, M, G = 1024ⁿ)", s)
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return 0, fmt.Errorf("size %q is not a number of bytes with an optional K, M or G suffix (e.g. 512K, 4M, 1G)", s)
	}
	if n > uint64(math.MaxInt64/mult) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n) * mult, nil
}

// FormatSize writes a size the way people read nccl-tests sizes: 524288 is
// "512K", 1073741824 is "1G"; sizes that are not whole units stay in bytes.
func FormatSize(b int64) string {
	switch {
	case b >= GiB && b%GiB == 0:
		return strconv.FormatInt(b/GiB, 10) + "G"
	case b >= MiB && b%MiB == 0:
		return strconv.FormatInt(b/MiB, 10) + "M"
	case b >= KiB && b%KiB == 0:
		return strconv.FormatInt(b/KiB, 10) + "K"
	}
	return strconv.FormatInt(b, 10)
}

// FormatSizes writes sizes as FormatSize does, joined by sep ("512K, 1M").
func FormatSizes(sizes []int64, sep string) string {
	parts := make([]string, len(sizes))
	for i, b := range sizes {
		parts[i] = FormatSize(b)
	}
	return strings.Join(parts, sep)
}

// Band is an inclusive range of message sizes. Its sizes are the powers of
// two inside it, as in an nccl-tests sweep with -f 2.
type Band struct {
	Min, Max int64
}

// MaxBandSize bounds bands to what nccl-tests can allocate on a GPU and
// keeps power-of-two arithmetic far from overflow.
const MaxBandSize = 64 * GiB

// ParseBand reads "512K-4M" (inclusive) or a single size "1M".
func ParseBand(s string) (Band, error) {
	t := strings.TrimSpace(s)
	lo, hi, found := strings.Cut(t, "-")
	if !found {
		hi = lo
	}
	min, minErr := ParseSize(lo)
	max, maxErr := ParseSize(hi)
	if err := cmp.Or(minErr, maxErr); err != nil {
		return Band{}, fmt.Errorf("band %q: %w", s, err)
	}
	b := Band{Min: min, Max: max}
	return b, b.Validate()
}

// Validate reports a band that holds no power-of-two size or is out of order.
func (b Band) Validate() error {
	switch {
	case b.Min <= 0 || b.Max <= 0:
		return fmt.Errorf("band %s: sizes must be at least 1 byte", b)
	case b.Min > b.Max:
		return fmt.Errorf("band %s: the first size is larger than the second; did you mean %s-%s?", b, FormatSize(b.Max), FormatSize(b.Min))
	case b.Max > MaxBandSize:
		return fmt.Errorf("band %s: sizes above %s are not supported", b, FormatSize(MaxBandSize))
	case len(b.Sizes()) == 0:
		return fmt.Errorf("band %s holds no power-of-two size; widen it (e.g. 512K-4M)", b)
	}
	return nil
}

// Sizes lists the powers of two in the band, smallest first.
func (b Band) Sizes() []int64 {
	var out []int64
	if b.Min <= 0 || b.Max < b.Min {
		return nil
	}
	p := int64(1) << (63 - bits.LeadingZeros64(uint64(b.Min)))
	if p < b.Min {
		p <<= 1
	}
	for ; p > 0 && p <= b.Max; p <<= 1 {
		out = append(out, p)
	}
	return out
}

// Sweep is the range nccl-tests is asked to measure for the band (-b lo
// -e hi -f 2): its first and last power of two, since nccl-tests doubles
// from -b (3M-5M is measured at 4M, not 3M and 6M). Zero when none.
func (b Band) Sweep() (lo, hi int64) {
	sizes := b.Sizes()
	if len(sizes) == 0 {
		return 0, 0
	}
	return sizes[0], sizes[len(sizes)-1]
}

// IsPowerOfTwo reports whether size is one of the sizes nccl-tests'
// doubling sweep (-f 2 from a power of two) measures.
func IsPowerOfTwo(size int64) bool { return size > 0 && size&(size-1) == 0 }

// CheckPowerOfTwo refuses a single size (a gate's, a guard's) that the
// doubling sweep never measures, naming the two it lies between.
func CheckPowerOfTwo(size int64) error {
	if IsPowerOfTwo(size) {
		return nil
	}
	if size <= 0 {
		return fmt.Errorf("size %d is not a power of two, and nccl-tests' doubling sweep only measures powers of two (e.g. 512K, 1M, 256M)", size)
	}
	lo := int64(1) << (63 - bits.LeadingZeros64(uint64(size)))
	return fmt.Errorf("size %s is not a power of two, and nccl-tests' doubling sweep only measures powers of two: did you mean %s or %s?", FormatSize(size), FormatSize(lo), FormatSize(lo*2))
}

// NearestPowerOfTwo is the power of two nearest to size on a log scale (a
// size at the boundary goes up): the size a called size is measured at.
func NearestPowerOfTwo(size int64) int64 {
	if size <= 1 {
		return 1
	}
	k := 63 - bits.LeadingZeros64(uint64(size)) // 2^k ≤ size < 2^(k+1)
	if float64(size) >= math.Sqrt2*float64(int64(1)<<k) && k < 62 {
		k++
	}
	return int64(1) << k
}

func (b Band) String() string {
	if b.Min == b.Max {
		return FormatSize(b.Min)
	}
	return FormatSize(b.Min) + "-" + FormatSize(b.Max)
}

// PowersOfTwo lists the powers of two from min to max inclusive, as an
// nccl-tests sweep "-b min -e max -f 2" visits them when min is one.
func PowersOfTwo(min, max int64) []int64 { return Band{Min: min, Max: max}.Sizes() }
