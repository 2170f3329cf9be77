/* mpi_groups: groups, communicators and MPI_Alltoallw on the virtual-time
 * MPI layer (mpicc, run by p2run), at any number of ranks:
 *   - the group calls: MPI_Group_range_incl / _range_excl (ascending,
 *     descending and single-rank ranges), _union, _intersection,
 *     _difference, _compare, each against the members it must have, in
 *     MPI's order (checked with MPI_Group_translate_ranks)
 *   - MPI_Comm_create_group (called by the even ranks only), MPI_Comm_dup
 *     with attributes (a user attribute's copy callback runs, MPI_TAG_UB is
 *     kept as Open MPI keeps it on a duplicate of MPI_COMM_WORLD,
 *     MPI_UNIVERSE_SIZE is the job's size), _dup_with_info, _set_info /
 *     _get_info, MPI_Comm_get_parent (MPI_COMM_NULL), MPI_Comm_test_inter
 *   - MPI_Alltoallw and MPI_Ialltoallw: to rank j, j + 1 ints, sent as MPI_INT
 *     to even ranks and as a strided vector (every other int of the send
 *     buffer) to odd ones, at byte displacements; received as MPI_INT;
 *     zero-byte pairs; every int
 *   - intercommunicators (2 ranks or more): the even and the odd ranks,
 *     MPI_Intercomm_create over MPI_COMM_WORLD; MPI_Comm_size / _rank (the
 *     local group), _remote_size, _remote_group; point-to-point both ways
 *     between every pair (MPI_ANY_SOURCE: the status names the remote rank);
 *     MPI_Intercomm_merge with high 0 / 1 on either side and the same on
 *     both, the merged order checked and used by MPI_Allreduce
 * Prints "mpi_groups: all N checks passed on P ranks" (rank 0); any failure
 * exits 1.
 *   mpi_groups intercoll   a collective on an intercommunicator (the job
 *                          must end naming it)
 *   mpi_groups badrange    MPI_Group_range_incl with a rank outside the group
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, checks;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* Whether g's members are the world ranks want[0..n), in that order. */
static int members(MPI_Group g, const int *want, int n)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int gs;
    MPI_Group_size(g, &gs);
    int ok = gs == n;
    int *idx = malloc(sizeof(int) * (size_t)(n + 1)), *w = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; ok && i < n; i++)
        idx[i] = i;
    if (ok) {
        MPI_Group_translate_ranks(g, n, idx, world, w);
        for (int i = 0; i < n; i++)
            ok &= w[i] == want[i];
    }
    free(idx);
    free(w);
    MPI_Group_free(&world);
    return ok;
}

static void groups(void)
{
    MPI_Group world, evens, odds, down, one, u, in, diff;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *want = malloc(sizeof(int) * (size_t)size), n = 0;
    int r_even[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(world, 1, r_even, &evens);
    for (int i = 0; i < size; i += 2)
        want[n++] = i;
    CHECK(members(evens, want, n));
    MPI_Group_range_excl(world, 1, r_even, &odds);
    n = 0;
    for (int i = 1; i < size; i += 2)
        want[n++] = i;
    CHECK(members(odds, want, n));
    int r_down[2][3] = {{size - 1, 0, -3}, {size - 2 > 0 ? size - 2 : 0, size - 2 > 0 ? size - 2 : 0, 1}};
    int nr = size > 2 ? 2 : 1;
    MPI_Group_range_incl(world, nr, r_down, &down); /* size-1, size-4, ...; then size-2 */
    n = 0;
    for (int i = size - 1; i >= 0; i -= 3)
        want[n++] = i;
    if (nr == 2)
        want[n++] = size - 2;
    CHECK(members(down, want, n));
    int r_one[1][3] = {{size / 2, size / 2, 1}};
    MPI_Group_range_incl(world, 1, r_one, &one);
    CHECK(members(one, &r_one[0][0], 1));
    /* union: odds first, then the evens not in it (all of them) */
    MPI_Group_union(odds, evens, &u);
    n = 0;
    for (int i = 1; i < size; i += 2)
        want[n++] = i;
    for (int i = 0; i < size; i += 2)
        want[n++] = i;
    CHECK(members(u, want, n));
    int cmp;
    MPI_Group_compare(u, world, &cmp);
    CHECK(cmp == (size <= 1 ? MPI_IDENT : MPI_SIMILAR));
    MPI_Group_compare(world, world, &cmp);
    CHECK(cmp == MPI_IDENT);
    MPI_Group_compare(evens, world, &cmp);
    CHECK(cmp == (size == 1 ? MPI_IDENT : MPI_UNEQUAL));
    /* intersection keeps the first group's order: down with the evens */
    MPI_Group_intersection(down, evens, &in);
    n = 0;
    for (int i = size - 1; i >= 0; i -= 3)
        if (i % 2 == 0)
            want[n++] = i;
    if (nr == 2 && (size - 2) % 2 == 0 && (size - 1 - (size - 2)) % 3 != 0)
        want[n++] = size - 2;
    CHECK(members(in, want, n));
    /* difference: the world without down */
    MPI_Group_difference(world, down, &diff);
    int dn = 0;
    for (int i = 0; i < size; i++) {
        int gone = (size - 1 - i) % 3 == 0 || (nr == 2 && i == size - 2);
        if (!gone)
            want[dn++] = i;
    }
    CHECK(members(diff, want, dn));
    int grank;
    MPI_Group_rank(evens, &grank);
    CHECK(grank == (rank % 2 ? MPI_UNDEFINED : rank / 2));

    /* MPI_Comm_create_group: the even ranks only */
    if (rank % 2 == 0) {
        MPI_Comm ce;
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &ce);
        int cr, cs, sum;
        MPI_Comm_rank(ce, &cr);
        MPI_Comm_size(ce, &cs);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ce);
        int want_sum = 0;
        for (int i = 0; i < size; i += 2)
            want_sum += i;
        CHECK(cr == rank / 2 && cs == (size + 1) / 2 && sum == want_sum);
        MPI_Comm_free(&ce);
    }
    MPI_Group gs[] = {world, evens, odds, down, one, u, in, diff};
    for (int i = 0; i < 8; i++)
        MPI_Group_free(&gs[i]);
    free(want);
    if (rank == 0)
        printf("groups: range_incl, range_excl, union, intersection, difference, compare; "
               "Comm_create_group: ok\n");
}

static int copied;
static int copy_attr(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)key, (void)extra;
    copied++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void comms(void)
{
    int key, flag, *v;
    static int val = 42;
    MPI_Comm d, d2, d3;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(d, key, &val);
    MPI_Comm_dup(d, &d2);
    MPI_Comm_get_attr(d2, key, &v, &flag);
    CHECK(copied == 1 && flag && *v == 42);
    MPI_Comm_get_attr(d2, MPI_TAG_UB, &v, &flag);
    CHECK(flag && *v >= 32767);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
    CHECK(flag && *v == size);
    MPI_Comm_get_attr(d2, MPI_UNIVERSE_SIZE, &v, &flag);
    CHECK(flag && *v == size);
    MPI_Comm_dup_with_info(d2, MPI_INFO_NULL, &d3);
    MPI_Comm_get_attr(d3, key, &v, &flag);
    CHECK(copied == 2 && flag && *v == 42);
    MPI_Info info;
    MPI_Comm_set_info(d3, MPI_INFO_NULL);
    MPI_Comm_get_info(d3, &info);
    int nkeys = -1;
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 0);
    MPI_Info_free(&info);
    int sum;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d3);
    CHECK(sum == size * (size - 1) / 2);
    int inter = -1;
    MPI_Comm_test_inter(d3, &inter);
    CHECK(inter == 0);
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL);
    MPI_Comm_free(&d3);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d);
    MPI_Comm_free_keyval(&key);
    if (rank == 0)
        printf("communicators: dup with attributes (copy callback, MPI_TAG_UB, "
               "MPI_UNIVERSE_SIZE), dup_with_info, info, get_parent, test_inter: ok\n");
}

/* MPI_Alltoallw (blocking or started and waited at once). */
static void alltoallw(int nb)
{
    /* to rank j: j + 1 ints rank * 1000 + j * 10 + i; rank 1 sends nothing
     * to rank 0 (a zero-byte pair) */
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *vec = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int stotal = 0;
    for (int j = 0; j < size; j++)
        stotal += 2 * (j + 1);
    int *sb = malloc(sizeof(int) * (size_t)stotal), *rb = malloc(sizeof(int) * (size_t)(size * (rank + 1)));
    int off = 0;
    for (int j = 0; j < size; j++) {
        int n = rank == 1 && j == 0 ? 0 : j + 1;
        sd[j] = off * (int)sizeof(int);
        vec[j] = MPI_DATATYPE_NULL;
        if (j % 2 == 0) { /* contiguous ints */
            sc[j] = n;
            st[j] = MPI_INT;
            for (int i = 0; i < n; i++)
                sb[off + i] = rank * 1000 + j * 10 + i;
        } else { /* every other int */
            MPI_Type_vector(n ? n : 1, 1, 2, MPI_INT, &vec[j]);
            MPI_Type_commit(&vec[j]);
            sc[j] = n ? 1 : 0;
            st[j] = vec[j];
            for (int i = 0; i < n; i++) {
                sb[off + 2 * i] = rank * 1000 + j * 10 + i;
                sb[off + 2 * i + 1] = -1;
            }
        }
        off += 2 * (j + 1);
    }
    for (int i = 0; i < size; i++) {
        rc[i] = rank == 0 && i == 1 ? 0 : rank + 1;
        rt[i] = MPI_INT;
        rd[i] = i * (rank + 1) * (int)sizeof(int);
    }
    for (int i = 0; i < size * (rank + 1); i++)
        rb[i] = -5;
    if (nb) {
        MPI_Request q;
        MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD);
    }
    for (int i = 0; i < size; i++)
        for (int k = 0; k < rank + 1; k++)
            CHECK(rb[i * (rank + 1) + k] == (rc[i] ? i * 1000 + rank * 10 + k : -5));
    for (int j = 0; j < size; j++)
        if (vec[j] != MPI_DATATYPE_NULL)
            MPI_Type_free(&vec[j]);
    free(sc), free(sd), free(rc), free(rd), free(st), free(rt), free(vec), free(sb), free(rb);
}

/* The even and the odd ranks as the two groups of an intercommunicator. */
static MPI_Comm make_inter(MPI_Comm *local)
{
    int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, local);
    MPI_Comm ic;
    MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &ic);
    return ic;
}

static void intercomm(void)
{
    if (size < 2)
        return;
    int color = rank % 2, nev = (size + 1) / 2, nodd = size / 2;
    MPI_Comm local, ic;
    ic = make_inter(&local);
    int flag = -1, ls, lr, rs;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_remote_size(ic, &rs);
    CHECK(flag == 1 && ls == (color ? nodd : nev) && lr == rank / 2 && rs == (color ? nev : nodd));
    MPI_Group rg, lg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(ic, &lg);
    int *want = malloc(sizeof(int) * (size_t)size), n = 0;
    for (int i = 1 - color; i < size; i += 2)
        want[n++] = i;
    CHECK(members(rg, want, n));
    n = 0;
    for (int i = color; i < size; i += 2)
        want[n++] = i;
    CHECK(members(lg, want, n));
    MPI_Group_free(&rg);
    MPI_Group_free(&lg);
    /* point-to-point: every rank sends each remote rank r one message, and
     * receives one from each, from MPI_ANY_SOURCE */
    int *sbuf = malloc(sizeof(int) * (size_t)rs), *seen = calloc((size_t)rs, sizeof(int));
    MPI_Request *q = malloc(sizeof(MPI_Request) * (size_t)rs);
    for (int r = 0; r < rs; r++) {
        sbuf[r] = rank * 100 + r;
        MPI_Isend(&sbuf[r], 1, MPI_INT, r, 5, ic, &q[r]);
    }
    for (int k = 0; k < rs; k++) {
        int v;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st);
        int src = st.MPI_SOURCE, world_src = 2 * src + (1 - color);
        CHECK(src >= 0 && src < rs && !seen[src] && v == world_src * 100 + lr);
        seen[src] = 1;
    }
    MPI_Waitall(rs, q, MPI_STATUSES_IGNORE);
    free(sbuf), free(seen), free(q);
    /* merges: high 0 on the evens and 1 on the odds (evens first), the
     * reverse (odds first), and 0 on both (the group of world rank 0 first) */
    for (int m = 0; m < 3; m++) {
        int high = m == 0 ? color : m == 1 ? !color : 0, first_odd = m == 1;
        MPI_Comm merged;
        MPI_Intercomm_merge(ic, high, &merged);
        int mr, ms, sum;
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        int want_rank = (color == first_odd ? 0 : (first_odd ? nodd : nev)) + rank / 2;
        CHECK(ms == size && mr == want_rank);
        /* the merged order: gather the world ranks */
        int *all = malloc(sizeof(int) * (size_t)size);
        MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, merged);
        n = 0;
        for (int g = 0; g < 2; g++)
            for (int i = (g == 0) == first_odd ? 1 : 0; i < size; i += 2)
                want[n++] = i;
        CHECK(!memcmp(all, want, sizeof(int) * (size_t)size));
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
        CHECK(sum == size * (size - 1) / 2);
        free(all);
        MPI_Comm_free(&merged);
    }
    free(want);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    if (rank == 0)
        printf("intercommunicators: create, sizes, groups, point-to-point both ways, merge "
               "three ways: ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "intercoll")) {
        MPI_Comm local, ic = make_inter(&local);
        MPI_Barrier(ic);
        printf("rank %d: MPI_Barrier on an intercommunicator returned\n", rank);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "badrange")) {
        MPI_Group world, g;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int r[1][3] = {{0, size, 1}};
        MPI_Group_range_incl(world, 1, r, &g);
        printf("rank %d: MPI_Group_range_incl returned\n", rank);
        MPI_Finalize();
        return 0;
    }
    groups();
    comms();
    alltoallw(0);
    alltoallw(1);
    if (rank == 0)
        printf("alltoallw: MPI_Alltoallw and MPI_Ialltoallw, contiguous and strided types, "
               "byte displacements, zero-byte pairs: ok\n");
    intercomm();
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_groups: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
