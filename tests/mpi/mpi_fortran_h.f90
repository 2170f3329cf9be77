! mpi_fortran_h: the Fortran MPI bindings of the virtual-time MPI layer
! through mpif.h (mpif90, MPI::MPI_Fortran; run by p2run, which preloads
! libp2mpi.so). Rank 0 prints the timing section of mpi_fortran_ref.c (the
! same calls: mpi_cases.sh checks the simulated times equal the C ones to
! the ps), then every check's data are compared element by element:
!   point-to-point (Send/Recv with statuses, Sendrecv, Isend/Irecv with
!   Waitall, Waitany, Waitsome, Test, Testall, Testany, Probe/Iprobe and
!   Get_count, persistent requests, Request_free, Cancel of a posted
!   receive, MPI_STATUS(ES)_IGNORE), the collectives (MPI_IN_PLACE too),
!   nonblocking collectives, communicators (Comm_split, _dup, _compare,
!   _split_type, _create from a group, _free) and groups, a Fortran user op
!   (MPI_Op_create), MPI_Pack'ed data, derived datatypes, the other local
!   calls MUMPS makes (MPI_Initialized, _Get_processor_name, _Pack_size,
!   _Type_contiguous), and a call through the profiling name
!   (PMPI_Allreduce).
! With the argument "unmodelled" it then calls MPI_File_open (MPI-IO), which
! the layer does not model: the job must stop naming it.
! Prints "mpi_fortran_h: all N checks passed on P ranks"; a failed check
! names itself and ends the job with MPI_Abort(2).
program mpi_fortran_h
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nranks, checks
  character(len=32) :: arg
  external :: isum
  checks = 0
  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call timings()
  call point_to_point()
  call requests()
  call collectives()
  call nonblocking_collectives()
  call communicators()
  call local_calls()
  if (rank == 0) print '(A,I0,A,I0,A)', 'mpi_fortran_h: all ', checks, ' checks passed on ', &
       nranks, ' ranks'
  call get_command_argument(1, arg)
  if (arg == 'unmodelled') call unmodelled()
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    checks = checks + 1
    if (.not. ok) then
      print '(A,I0,A,A)', 'rank ', rank, ': FAIL ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 2, e)
    end if
  end subroutine check

  ! The calls of mpi_fortran_ref.c, in its order.
  subroutine timings()
    double precision :: x(128), t0, t
    double precision, volatile :: y(128)
    integer :: i, r(2)
    do i = 1, 128
      x(i) = rank + i - 1
    end do
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = 0
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      if (rank == 0) then
        call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, ierr)
        call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else if (rank == 1) then
        call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, ierr)
      end if
    end do
    t = (MPI_Wtime() - t0) / 200.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'pingpong 8 B: ', t, ' us'
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    t = (MPI_Wtime() - t0) / 100.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'allreduce 8 B: ', t, ' us'
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      call MPI_Irecv(y, 128, MPI_DOUBLE_PRECISION, mod(rank + nranks - 1, nranks), 2, &
           MPI_COMM_WORLD, r(1), ierr)
      call MPI_Isend(x, 128, MPI_DOUBLE_PRECISION, mod(rank + 1, nranks), 2, MPI_COMM_WORLD, &
           r(2), ierr)
      call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
    end do
    t = (MPI_Wtime() - t0) / 100.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'ring 1 KiB: ', t, ' us'
    call check(y(5) == mod(rank + nranks - 1, nranks) + 4, 'ring data')
  end subroutine timings

  subroutine point_to_point()
    double precision :: a(10), b(10)
    integer :: st(MPI_STATUS_SIZE), i, n, nxt, prv, v(5)
    logical :: flag
    nxt = mod(rank + 1, nranks)
    prv = mod(rank + nranks - 1, nranks)
    do i = 1, 10
      a(i) = rank * 100 + i
    end do
    ! Sendrecv round the ring, with its status
    call MPI_Sendrecv(a, 10, MPI_DOUBLE_PRECISION, nxt, 10 + rank, b, 10, MPI_DOUBLE_PRECISION, &
         MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call check(st(MPI_SOURCE) == prv .and. st(MPI_TAG) == 10 + prv, 'Sendrecv status')
    call MPI_Get_count(st, MPI_DOUBLE_PRECISION, n, ierr)
    call check(n == 10, 'Get_count after Sendrecv')
    call check(all(b == [(prv * 100 + i, i = 1, 10)]), 'Sendrecv data')
    ! Send/Recv, Ssend, Probe and Iprobe between 0 and 1
    if (rank == 0) then
      call MPI_Send(a, 7, MPI_DOUBLE_PRECISION, 1, 3, MPI_COMM_WORLD, ierr)
      v = [(i * 11, i = 1, 5)]
      call MPI_Ssend(v, 5, MPI_INTEGER, 1, 42, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call MPI_Probe(0, 3, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_DOUBLE_PRECISION, n, ierr)
      call check(n == 7 .and. st(MPI_TAG) == 3, 'Probe status')
      b = -1
      call MPI_Recv(b, 10, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, st, ierr)
      call check(all(b(1:7) == a(1:7) - 100) .and. b(8) == -1, 'Recv data')
      flag = .false.
      do while (.not. flag)
        call MPI_Iprobe(MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, flag, st, ierr)
      end do
      call MPI_Get_count(st, MPI_INTEGER, n, ierr)
      call check(n == 5 .and. st(MPI_SOURCE) == 0, 'Iprobe status')
      call MPI_Recv(v, 5, MPI_INTEGER, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(all(v == [(i * 11, i = 1, 5)]), 'Ssend data')
    end if
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine point_to_point

  subroutine requests()
    integer, parameter :: m = 64
    ! buffers of nonblocking calls: volatile, so that the compiler neither
    ! keeps them in registers nor moves stores past the calls that complete
    ! them (what MPI_F_sync_reg and ASYNCHRONOUS are for)
    integer, volatile :: sendv(m), recvv(m, 0:15)
    integer :: reqs(32), sts(MPI_STATUS_SIZE, 32), st(MPI_STATUS_SIZE)
    integer :: i, k, p, idx, cnt, idxs(32), got, seen(0:15), pers(2)
    logical :: flag
    do i = 1, m
      sendv(i) = rank * 1000 + i
    end do
    ! every rank to every other: Irecv/Isend, Waitall with statuses
    k = 0
    do p = 0, nranks - 1
      if (p == rank) cycle
      k = k + 1
      call MPI_Irecv(recvv(1, p), m, MPI_INTEGER, p, 7, MPI_COMM_WORLD, reqs(k), ierr)
    end do
    do p = 0, nranks - 1
      if (p == rank) cycle
      k = k + 1
      call MPI_Isend(sendv, m, MPI_INTEGER, p, 7, MPI_COMM_WORLD, reqs(k), ierr)
    end do
    call MPI_Waitall(k, reqs, sts, ierr)
    call check(all(reqs(1:k) == MPI_REQUEST_NULL), 'Waitall leaves MPI_REQUEST_NULL')
    k = 0
    do p = 0, nranks - 1
      if (p == rank) cycle
      k = k + 1
      call check(sts(MPI_SOURCE, k) == p .and. sts(MPI_TAG, k) == 7, 'Waitall statuses')
      call check(all(recvv(:, p) == [(p * 1000 + i, i = 1, m)]), 'Isend/Irecv data')
    end do
    ! Waitany, then Testany/Testsome/Waitsome/Test/Testall over fresh receives
    call post_all(8, m, sendv, recvv, reqs, k)
    seen = 0
    do i = 1, nranks - 1
      call MPI_Waitany(nranks - 1, reqs, idx, st, ierr)
      call check(idx >= 1 .and. idx <= nranks - 1, 'Waitany index is 1-based')
      call check(reqs(idx) == MPI_REQUEST_NULL, 'Waitany frees the request')
      seen(st(MPI_SOURCE)) = seen(st(MPI_SOURCE)) + 1
      call check(all(recvv(:, idx) == [(st(MPI_SOURCE) * 1000 + p, p = 1, m)]), 'Waitany data')
    end do
    call MPI_Waitany(nranks - 1, reqs, idx, st, ierr)
    call check(idx == MPI_UNDEFINED, 'Waitany over no active request')
    call check(sum(seen) == nranks - 1 .and. seen(rank) == 0, 'Waitany sources')
    call MPI_Waitall(nranks - 1, reqs(nranks), MPI_STATUSES_IGNORE, ierr)
    call post_all(9, m, sendv, recvv, reqs, k)
    got = 0
    do while (got < nranks - 1)
      call MPI_Testsome(nranks - 1, reqs, cnt, idxs, sts, ierr)
      do i = 1, cnt
        call check(reqs(idxs(i)) == MPI_REQUEST_NULL, 'Testsome indices are 1-based')
        call check(all(recvv(:, idxs(i)) == [(sts(MPI_SOURCE, i) * 1000 + p, p = 1, m)]), &
             'Testsome data')
      end do
      got = got + cnt
    end do
    call MPI_Testall(nranks - 1, reqs(nranks), flag, MPI_STATUSES_IGNORE, ierr)
    do while (.not. flag)
      call MPI_Testall(nranks - 1, reqs(nranks), flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call post_all(10, m, sendv, recvv, reqs, k)
    call MPI_Waitsome(k, reqs, cnt, idxs, MPI_STATUSES_IGNORE, ierr)
    call check(cnt >= 1 .and. all(idxs(1:cnt) >= 1), 'Waitsome indices')
    flag = .false.
    do while (.not. flag)
      call MPI_Testany(k, reqs, idx, flag, st, ierr)
    end do
    do i = 1, k
      flag = .false.
      do while (.not. flag)
        call MPI_Test(reqs(i), flag, MPI_STATUS_IGNORE, ierr)
      end do
    end do
    call check(all(reqs(1:k) == MPI_REQUEST_NULL), 'Test leaves MPI_REQUEST_NULL')
    call MPI_Waitall(k, reqs(k + 1), MPI_STATUSES_IGNORE, ierr)
    ! persistent requests round the ring, twice; then freed
    call MPI_Recv_init(recvv(1, 0), m, MPI_INTEGER, mod(rank + nranks - 1, nranks), 11, &
         MPI_COMM_WORLD, pers(1), ierr)
    call MPI_Send_init(sendv, m, MPI_INTEGER, mod(rank + 1, nranks), 11, MPI_COMM_WORLD, &
         pers(2), ierr)
    do i = 1, 2
      sendv(1) = rank + 10 * i
      call MPI_Startall(2, pers, ierr)
      call MPI_Waitall(2, pers, sts, ierr)
      call check(pers(1) /= MPI_REQUEST_NULL, 'persistent requests stay')
      call check(recvv(1, 0) == mod(rank + nranks - 1, nranks) + 10 * i, 'persistent data')
    end do
    call MPI_Request_free(pers(1), ierr)
    call MPI_Request_free(pers(2), ierr)
    call check(pers(1) == MPI_REQUEST_NULL .and. pers(2) == MPI_REQUEST_NULL, 'Request_free')
    ! a receive nothing matches, cancelled
    call MPI_Irecv(recvv, m, MPI_INTEGER, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Cancel(reqs(1), ierr)
    call MPI_Wait(reqs(1), st, ierr)
    call MPI_Test_cancelled(st, flag, ierr)
    call check(flag .and. reqs(1) == MPI_REQUEST_NULL, 'Cancel of a posted receive')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine requests

  ! Receives from any rank, one per other rank (reqs(1:k), into recvv(:, 1:k)),
  ! and sends to every other rank (reqs(k+1:2k)).
  subroutine post_all(tag, m, sendv, recvv, reqs, k)
    integer, intent(in) :: tag, m
    integer, volatile :: sendv(m), recvv(m, 0:15)
    integer, intent(inout) :: reqs(32)
    integer, intent(out) :: k
    integer :: p
    k = 0
    do p = 0, nranks - 1
      if (p == rank) cycle
      k = k + 1
      call MPI_Irecv(recvv(1, k), m, MPI_INTEGER, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &
           reqs(k), ierr)
    end do
    do p = 0, nranks - 1
      if (p == rank) cycle
      call MPI_Isend(sendv, m, MPI_INTEGER, p, tag, MPI_COMM_WORLD, &
           reqs(k + 1 + p - merge(1, 0, p > rank)), ierr)
    end do
  end subroutine post_all

  subroutine collectives()
    integer :: i, p, n, total, ibuf(100), cnts(0:15), displs(0:15), one(1), outv(64), inv(64)
    double precision :: d(4), e(4)
    n = nranks
    ! Allreduce (integer and double), MPI_IN_PLACE, and through PMPI_
    call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total == n * (n + 1) / 2, 'Allreduce sum')
    d = [(rank * i * 1.5d0, i = 1, 4)]
    call MPI_Allreduce(d, e, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(e == [(i * 1.5d0 * n * (n - 1) / 2, i = 1, 4)]), 'Allreduce doubles')
    one(1) = rank
    call MPI_Allreduce(MPI_IN_PLACE, one, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(one(1) == n - 1, 'Allreduce MPI_IN_PLACE')
    total = -1
    call PMPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total == n * (n + 1) / 2, 'PMPI_Allreduce is the layer''s')
    ! Bcast from the last rank
    ibuf = 0
    if (rank == n - 1) ibuf = [(i * 3, i = 1, 100)]
    call MPI_Bcast(ibuf, 100, MPI_INTEGER, n - 1, MPI_COMM_WORLD, ierr)
    call check(all(ibuf == [(i * 3, i = 1, 100)]), 'Bcast')
    ! Reduce (and in place at the root)
    total = -1
    call MPI_Reduce(rank, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(total == n * (n - 1) / 2, 'Reduce')
    one(1) = rank + 1
    if (rank == 1) then
      call MPI_Reduce(MPI_IN_PLACE, one, 1, MPI_INTEGER, MPI_PROD, 1, MPI_COMM_WORLD, ierr)
      total = 1
      do i = 1, n
        total = total * i
      end do
      call check(one(1) == total, 'Reduce MPI_IN_PLACE at the root')
    else
      call MPI_Reduce(one, total, 1, MPI_INTEGER, MPI_PROD, 1, MPI_COMM_WORLD, ierr)
    end if
    ! Gather, Scatter, Allgather, Alltoall
    call MPI_Gather(rank * 7, 1, MPI_INTEGER, outv, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(all(outv(1:n) == [(p * 7, p = 0, n - 1)]), 'Gather')
    inv(1:n) = [(p * 5 + 1, p = 0, n - 1)]
    call MPI_Scatter(inv, 1, MPI_INTEGER, one, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check(one(1) == rank * 5 + 1, 'Scatter')
    call MPI_Allgather(rank + 100, 1, MPI_INTEGER, outv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(outv(1:n) == [(p + 100, p = 0, n - 1)]), 'Allgather')
    inv(1:n) = [(rank * 10 + p, p = 0, n - 1)]
    call MPI_Alltoall(inv, 1, MPI_INTEGER, outv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(outv(1:n) == [(p * 10 + rank, p = 0, n - 1)]), 'Alltoall')
    ! the v-variants: rank p contributes p + 1 elements
    cnts(0:n - 1) = [(p + 1, p = 0, n - 1)]
    displs(0) = 0
    do p = 1, n - 1
      displs(p) = displs(p - 1) + cnts(p - 1)
    end do
    inv(1:rank + 1) = rank
    call MPI_Gatherv(inv, rank + 1, MPI_INTEGER, outv, cnts, displs, MPI_INTEGER, 0, &
         MPI_COMM_WORLD, ierr)
    if (rank == 0) call check(all(outv(1:displs(n - 1) + n) == [((p, i = 0, p), p = 0, n - 1)]), &
         'Gatherv')
    call MPI_Allgatherv(inv, rank + 1, MPI_INTEGER, outv, cnts, displs, MPI_INTEGER, &
         MPI_COMM_WORLD, ierr)
    call check(all(outv(1:displs(n - 1) + n) == [((p, i = 0, p), p = 0, n - 1)]), 'Allgatherv')
    inv(1:displs(n - 1) + n) = [((p * 2, i = 0, p), p = 0, n - 1)]
    outv = -1
    call MPI_Scatterv(inv, cnts, displs, MPI_INTEGER, outv, rank + 1, MPI_INTEGER, 0, &
         MPI_COMM_WORLD, ierr)
    call check(all(outv(1:rank + 1) == rank * 2) .and. outv(rank + 2) == -1, 'Scatterv')
    ! Alltoallv: rank r sends p + 1 copies of r to rank p
    inv(1:displs(n - 1) + n) = rank
    call MPI_Alltoallv(inv, cnts, displs, MPI_INTEGER, outv, [(rank + 1, p = 0, n - 1)], &
         [(p * (rank + 1), p = 0, n - 1)], MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(all(outv(1:n * (rank + 1)) == [((p, i = 0, rank), p = 0, n - 1)]), 'Alltoallv')
    ! Reduce_scatter(_block), Scan, Exscan
    inv(1:displs(n - 1) + n) = [(i, i = 1, displs(n - 1) + n)]
    call MPI_Reduce_scatter(inv, outv, cnts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(outv(1:rank + 1) == n * [(displs(rank) + i, i = 1, rank + 1)]), &
         'Reduce_scatter')
    inv(1:2 * n) = [(i + rank, i = 1, 2 * n)]
    call MPI_Reduce_scatter_block(inv, outv, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(outv(1) == n * (2 * rank + 1) + n * (n - 1) / 2 .and. &
         outv(2) == n * (2 * rank + 2) + n * (n - 1) / 2, 'Reduce_scatter_block')
    call MPI_Scan(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total == (rank + 1) * (rank + 2) / 2, 'Scan')
    call MPI_Exscan(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank > 0) call check(total == rank * (rank + 1) / 2, 'Exscan')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine collectives

  subroutine nonblocking_collectives()
    integer :: req, reqs(2), i
    integer, volatile :: total, ibuf(50)
    logical :: flag
    call MPI_Iallreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(total == nranks * (nranks + 1) / 2 .and. req == MPI_REQUEST_NULL, 'Iallreduce')
    ibuf = 0
    if (rank == 0) ibuf = [(i, i = 1, 50)]
    call MPI_Ibcast(ibuf, 50, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(all(ibuf == [(i, i = 1, 50)]), 'Ibcast')
  end subroutine nonblocking_collectives

  subroutine communicators()
    integer :: sub, dup, node, grp, rev, newc, r, s, total, res, i, tr(16)
    ! even and odd ranks, in reverse order
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
    call MPI_Comm_size(sub, s, ierr)
    call MPI_Comm_rank(sub, r, ierr)
    call check(s == (nranks + 1 - mod(rank, 2)) / 2, 'Comm_split size')
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
    call check(total == sum([(i, i = mod(rank, 2), nranks - 1, 2)]), 'Allreduce on a split')
    call MPI_Allreduce(rank, i, 1, MPI_INTEGER, MPI_MAX, sub, ierr)
    call MPI_Comm_rank(sub, r, ierr)
    call check((i - rank) / 2 == r, 'Comm_split orders by key')
    call MPI_Comm_dup(sub, dup, ierr)
    call MPI_Comm_compare(sub, dup, res, ierr)
    call check(res == MPI_CONGRUENT, 'Comm_dup congruent')
    call MPI_Comm_free(dup, ierr)
    call MPI_Comm_free(sub, ierr)
    call check(sub == MPI_COMM_NULL .and. dup == MPI_COMM_NULL, 'Comm_free')
    call MPI_Comm_split(MPI_COMM_WORLD, merge(MPI_UNDEFINED, 0, rank == 0), rank, sub, ierr)
    call check((rank == 0) .eqv. (sub == MPI_COMM_NULL), 'Comm_split MPI_UNDEFINED')
    if (sub /= MPI_COMM_NULL) call MPI_Comm_free(sub, ierr)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
    call MPI_Comm_size(node, s, ierr)
    call check(s == 1, 'Comm_split_type: one rank per node')
    call MPI_Comm_free(node, ierr)
    ! groups: the world reversed
    call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
    call MPI_Group_size(grp, s, ierr)
    call check(s == nranks, 'Group_size')
    call MPI_Group_incl(grp, nranks, [(nranks - 1 - i, i = 0, nranks - 1)], rev, ierr)
    call MPI_Group_rank(rev, r, ierr)
    call check(r == nranks - 1 - rank, 'Group_incl rank')
    call MPI_Group_translate_ranks(rev, nranks, [(i, i = 0, nranks - 1)], grp, tr, ierr)
    call check(all(tr(1:nranks) == [(nranks - 1 - i, i = 0, nranks - 1)]), &
         'Group_translate_ranks')
    call MPI_Comm_create(MPI_COMM_WORLD, rev, newc, ierr)
    call MPI_Comm_rank(newc, r, ierr)
    call check(r == nranks - 1 - rank, 'Comm_create from a group')
    i = rank
    call MPI_Bcast(i, 1, MPI_INTEGER, 0, newc, ierr)
    call check(i == nranks - 1, 'Bcast on the reversed communicator')
    call MPI_Group_free(rev, ierr)
    call MPI_Group_free(grp, ierr)
    call check(rev == MPI_GROUP_NULL .and. grp == MPI_GROUP_NULL, 'Group_free')
    call MPI_Comm_free(newc, ierr)
  end subroutine communicators

  ! Calls Open MPI answers (user op, packing, a derived type) used by the
  ! layer's modelled calls.
  subroutine local_calls()
    integer :: op, total, vec, pos, i, buf(100), got(8), cont, psize, namelen
    character :: packed(64)
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    double precision :: t1, t2
    logical :: flag
    ! the local calls MUMPS makes besides those below
    call MPI_Initialized(flag, ierr)
    call check(flag, 'MPI_Initialized')
    call MPI_Get_processor_name(pname, namelen, ierr)
    call check(namelen > 0, 'MPI_Get_processor_name')
    call MPI_Pack_size(3, MPI_INTEGER, MPI_COMM_WORLD, psize, ierr)
    call check(psize >= 12, 'MPI_Pack_size')
    call MPI_Type_contiguous(2, MPI_INTEGER, cont, ierr)
    call MPI_Type_commit(cont, ierr)
    buf = [(i + rank * 100, i = 1, 100)]
    got = 0
    call MPI_Sendrecv(buf, 3, cont, mod(rank + 1, nranks), 4, got, 8, MPI_INTEGER, &
         mod(rank + nranks - 1, nranks), 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(got(1:6) == [(i + mod(rank + nranks - 1, nranks) * 100, i = 1, 6)]), &
         'derived datatype (contiguous)')
    call MPI_Type_free(cont, ierr)
    call MPI_Op_create(isum, .true., op, ierr)
    call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call check(total == nranks * (nranks + 1) / 2, 'Allreduce with a Fortran user op')
    call MPI_Op_free(op, ierr)
    call MPI_Type_vector(4, 1, 2, MPI_INTEGER, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    buf = [(i + rank * 100, i = 1, 100)]
    got = 0
    call MPI_Sendrecv(buf, 1, vec, mod(rank + 1, nranks), 5, got, 4, MPI_INTEGER, &
         mod(rank + nranks - 1, nranks), 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(got(1:4) == [(2 * i - 1 + mod(rank + nranks - 1, nranks) * 100, i = 1, 4)]), &
         'derived datatype (vector)')
    call MPI_Type_free(vec, ierr)
    if (rank < 2) then
      pos = 0
      if (rank == 0) then
        call MPI_Pack(buf, 3, MPI_INTEGER, packed, 64, pos, MPI_COMM_WORLD, ierr)
        call MPI_Pack(2.5d0, 1, MPI_DOUBLE_PRECISION, packed, 64, pos, MPI_COMM_WORLD, ierr)
        call MPI_Send(packed, pos, MPI_PACKED, 1, 6, MPI_COMM_WORLD, ierr)
      else
        call MPI_Recv(packed, 64, MPI_PACKED, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Unpack(packed, 64, pos, got, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
        call MPI_Unpack(packed, 64, pos, t1, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
        call check(all(got(1:3) == [1, 2, 3]) .and. abs(t1 - 2.5d0) < 1d-15, 'MPI_PACKED data')
      end if
    end if
    t1 = MPI_Wtime()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t2 = MPI_Wtime()
    call check(t2 > t1, 'MPI_Wtime moves')
    t1 = MPI_Wtick()
    call check(abs(t1 - 1.0d-12) < 1d-20, 'MPI_Wtick')
  end subroutine local_calls

  subroutine unmodelled()
    integer :: fh
    call MPI_File_open(MPI_COMM_WORLD, "p2mpi.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    print '(A,I0,A)', 'rank ', rank, ': MPI_File_open returned'
  end subroutine unmodelled
end program mpi_fortran_h

! A Fortran user op (MPI_Op_create): integer sum
subroutine isum(invec, inoutvec, n, datatype)
  implicit none
  integer, intent(in) :: n, datatype
  integer, intent(in) :: invec(n)
  integer, intent(inout) :: inoutvec(n)
  inoutvec = inoutvec + invec
end subroutine isum
