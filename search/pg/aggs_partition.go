package pg

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/store"
)

// terms include partitions ({"partition": p, "num_partitions": n}): a
// value belongs to partition hash(value) mod n, with Elasticsearch's
// hashes (IncludeExclude): a string's MurmurHash3 x86 32-bit of its UTF-8
// bytes with seed 31, a whole number's (a long, a date's epoch
// milliseconds, a boolean's 0 or 1) BitMixer.mix64, a double's mix64 of
// its sortable bits. The partition is resolved to the values of the scope
// that fall in it before the statements run, so that the statements read
// an include list.

// partitionSeed is Elasticsearch's IncludeExclude.HASH_PARTITIONING_SEED.
const partitionSeed = 31

// partitionTerms resolves the partitioned includes of nodes and their
// sub-aggregations to value lists.
func (x *aggExec) partitionTerms(nodes []*aggNode) error {
	for _, n := range nodes {
		if f := n.include; n.typ == "terms" && f != nil && f.numPartitions > 0 {
			st := &args{types: x.base.types}
			where := scopeWhere(st, x.scope)
			if x.scope.DataOwnerID == 0 {
				where = "FALSE"
			}
			rows, err := x.query("SELECT DISTINCT t.k #>> '{}', jsonb_typeof(t.k) FROM documents d CROSS JOIN LATERAL "+
				termValues(st, n.field)+" t WHERE "+where+" LIMIT "+strconv.Itoa(limits.MaxAggBuckets+1), st)
			if err != nil {
				return err
			}
			if len(rows) > limits.MaxAggBuckets {
				return n.badf("[include] partitions over more than %d distinct values", limits.MaxAggBuckets)
			}
			f.values = []string{}
			for _, r := range rows {
				v, _ := r[0].(string)
				kind, _ := r[1].(string)
				if partitionOf(v, kind, n.ftype == store.FieldFloat, f.numPartitions) == f.partition {
					f.values = append(f.values, v)
				}
			}
		}
		if err := x.partitionTerms(n.subs); err != nil {
			return err
		}
	}
	return nil
}

// partitionOf is the partition of value v (its text, JSON type kind).
func partitionOf(v, kind string, float bool, n int) int {
	var h int64
	switch {
	case kind == "boolean":
		h = mix64(map[string]int64{"true": 1}[v])
	case kind == "number":
		if i, err := strconv.ParseInt(v, 10, 64); err == nil && !float {
			h = mix64(i)
		} else {
			f, _ := strconv.ParseFloat(v, 64)
			h = mix64(sortableDouble(f))
		}
	default:
		h = int64(murmur3x86(([]byte)(v), partitionSeed))
	}
	m := h % int64(n)
	if m < 0 {
		m += int64(n)
	}
	return int(m)
}

// murmur3x86 is MurmurHash3 x86 32-bit (Lucene's
// StringHelper.murmurhash3_x86_32), as Java's int.
func murmur3x86(data []byte, seed uint32) int32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	h := seed
	n := len(data) / 4
	for i := range n {
		k := binary.LittleEndian.Uint32(data[i*4:])
		k = bits.RotateLeft32(k*c1, 15) * c2
		h ^= k
		h = bits.RotateLeft32(h, 13)*5 + 0xe6546b64
	}
	var k uint32
	switch tail := data[n*4:]; len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		h ^= bits.RotateLeft32(k*c1, 15) * c2
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

// mix64 is HPPC's BitMixer.mix64.
func mix64(v int64) int64 {
	z := uint64(v)
	z = (z ^ (z >> 32)) * 0x4cd6944c5cc20b6d
	z = (z ^ (z >> 29)) * 0xfc12c5b19d3259e9
	return int64(z ^ (z >> 32))
}

// sortableDouble is Lucene's NumericUtils.doubleToSortableLong.
func sortableDouble(f float64) int64 {
	b := int64(math.Float64bits(f))
	return b ^ (b>>63)&0x7fffffffffffffff
}
