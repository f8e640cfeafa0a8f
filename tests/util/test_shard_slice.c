/* The slices of sharded data parallel: equal lengths, the padding at the
 * end, the real floats of each rank tiling [0, n) exactly once. */
#include "check.h"
#include "shard_slice.h"

/* Every rank's real floats, in rank order, are [0, n), each once. */
static void check_tiles(size_t n, int ranks)
{
    size_t next = 0;
    for (int r = 0; r < ranks; r++) {
        shard_slice s = shard_slice_of(n, ranks, r);
        CHECK(s.len * (size_t)ranks == s.padded && s.padded >= n && s.padded - n < (size_t)ranks);
        CHECK(s.first == s.len * (size_t)r && s.count <= s.len);
        if (s.count)
            CHECK(s.first == next);
        next += s.count;
    }
    CHECK(next == n);
}

int main(void)
{
    shard_slice a = shard_slice_of(10, 4, 3); /* 3,3,3,1 and 2 floats of padding */
    CHECK(a.len == 3 && a.padded == 12 && a.first == 9 && a.count == 1);
    shard_slice b = shard_slice_of(10, 4, 1);
    CHECK(b.first == 3 && b.count == 3);
    shard_slice c = shard_slice_of(12, 4, 3); /* divides: no padding */
    CHECK(c.len == 3 && c.padded == 12 && c.count == 3);
    shard_slice d = shard_slice_of(2, 4, 3); /* fewer floats than ranks */
    CHECK(d.len == 1 && d.padded == 4 && d.first == 3 && d.count == 0);
    shard_slice one = shard_slice_of(7, 1, 0); /* unsharded: the vector */
    CHECK(one.len == 7 && one.padded == 7 && one.first == 0 && one.count == 7);
    shard_slice odd = shard_slice_of(4200963, 2, 1);
    CHECK(odd.len == 2100482 && odd.padded == 4200964 && odd.count == 2100481);
    size_t sizes[] = {1, 2, 3, 7, 10, 4096, 4097, 1000003};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int ranks = 1; ranks <= 9; ranks++)
            check_tiles(sizes[i], ranks);
    return check_finish("test_shard_slice");
}
