#include "shard_slice.h"

shard_slice shard_slice_of(size_t n, int ranks, int rank)
{
    shard_slice s = {.ranks = ranks < 1 ? 1 : ranks, .rank = rank};
    s.len = (n + (size_t)s.ranks - 1) / (size_t)s.ranks;
    s.padded = s.len * (size_t)s.ranks;
    s.first = s.len * (size_t)rank;
    /* n = 10 over 4: len 3, padded 12; rank 3 holds [9, 10): count 1. A
     * rank past the end (n = 2 over 4: len 1, ranks 2 and 3) holds none. */
    s.count = s.first >= n ? 0 : (n - s.first < s.len ? n - s.first : s.len);
    return s;
}
