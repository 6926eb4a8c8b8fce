// From NCCL's public source, tag v2.28.3-1, src/nccl.h.in lines 287-301
// (git -C /work/.mirror/NVIDIA+nccl/repo show v2.28.3-1:src/nccl.h.in):
// NCCL's data type enum, copied as a fact table for nccl's datatype test.
/* Data types */
typedef enum { ncclInt8       = 0, ncclChar       = 0,
               ncclUint8      = 1,
               ncclInt32      = 2, ncclInt        = 2,
               ncclUint32     = 3,
               ncclInt64      = 4,
               ncclUint64     = 5,
               ncclFloat16    = 6, ncclHalf       = 6,
               ncclFloat32    = 7, ncclFloat      = 7,
               ncclFloat64    = 8, ncclDouble     = 8,
               ncclBfloat16   = 9,
               ncclFloat8e4m3 = 10,
               ncclFloat8e5m2 = 11,
               ncclNumTypes   = 12
} ncclDataType_t;
