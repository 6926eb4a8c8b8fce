package nccl

import "strconv"

// Datatype is NCCL's ncclDataType_t, the number its COLL log lines print
// after "datatype" ("AllReduce: opCount 0 … count 1024 datatype 9 …").
type Datatype int

// datatypeInfo is what nccltune needs of a data type: NCCL's name, the
// name nccl-tests prints in its "type" column, and its size in bytes.
type datatypeInfo struct {
	ncclName  string
	testsName string
	size      int64
}

// datatypes is NCCL's enum in order (nccl.h.in as of 2.28), with sizes.
var datatypes = []datatypeInfo{
	{"ncclInt8", "int8", 1},
	{"ncclUint8", "uint8", 1},
	{"ncclInt32", "int32", 4},
	{"ncclUint32", "uint32", 4},
	{"ncclInt64", "int64", 8},
	{"ncclUint64", "uint64", 8},
	{"ncclFloat16", "half", 2},
	{"ncclFloat32", "float", 4},
	{"ncclFloat64", "double", 8},
	{"ncclBfloat16", "bfloat16", 2},
	{"ncclFloat8e4m3", "f8e4m3", 1},
	{"ncclFloat8e5m2", "f8e5m2", 1},
}

// Datatypes are NCCL's data types in enum order.
func Datatypes() []Datatype {
	out := make([]Datatype, len(datatypes))
	for i := range datatypes {
		out[i] = Datatype(i)
	}
	return out
}

// Valid says whether d is one of NCCL's data types.
func (d Datatype) Valid() bool { return d >= 0 && int(d) < len(datatypes) }

// Size is the type's size in bytes; 0 for a number NCCL does not define.
func (d Datatype) Size() int64 {
	if !d.Valid() {
		return 0
	}
	return datatypes[d].size
}

// NCCLName is NCCL's name of the type ("ncclBfloat16").
func (d Datatype) NCCLName() string {
	if !d.Valid() {
		return "datatype " + strconv.Itoa(int(d))
	}
	return datatypes[d].ncclName
}

// String is the name nccl-tests prints ("bfloat16", "half", "float").
func (d Datatype) String() string {
	if !d.Valid() {
		return "datatype " + strconv.Itoa(int(d))
	}
	return datatypes[d].testsName
}

// CallSize is the size nccl-tests reports for one NCCL call of op with
// count elements of eltSize bytes on nranks: for the ops whose count is one
// rank's part, nranks parts; 0 when nranks is needed and unknown.
func CallSize(op Op, count, eltSize int64, nranks int) int64 {
	bytes := count * eltSize
	if !op.Splits() {
		return bytes
	}
	if nranks <= 0 {
		return 0
	}
	return bytes * int64(nranks)
}
