! mpi_fortran_f08: the Fortran MPI bindings of the virtual-time MPI layer
! through `use mpi_f08` (Open MPI's f08 library calls the ompi_*_f functions,
! and pmpi_*_ for calls with LOGICAL arguments; mpif90, MPI::MPI_Fortran;
! run by p2run). Rank 0 prints the timing section of mpi_fortran_ref.c
! (mpi_cases.sh checks the simulated times equal the C ones), then the data
! of Allreduce (and MPI_IN_PLACE), Bcast, Sendrecv with type(MPI_Status),
! Isend/Irecv with Waitall and MPI_STATUSES_IGNORE, Iprobe, Test, Waitany,
! Cancel, Comm_split/_dup/_free, groups and Iallreduce are checked element
! by element.
! With the argument "unmodelled" it then calls MPI_File_open (MPI-IO), which
! the layer does not model: the job must stop naming it.
! Prints "mpi_fortran_f08: all N checks passed on P ranks"; a failed check
! names itself and ends the job with MPI_Abort(2).
program mpi_fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, checks
  character(len=32) :: arg
  checks = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call timings()
  call calls()
  if (rank == 0) print '(A,I0,A,I0,A)', 'mpi_fortran_f08: all ', checks, ' checks passed on ', &
       nranks, ' ranks'
  call get_command_argument(1, arg)
  if (arg == 'unmodelled') call unmodelled()
  call MPI_Finalize()

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
      print '(A,I0,A,A)', 'rank ', rank, ': FAIL ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
  end subroutine check

  ! The calls of mpi_fortran_ref.c, in its order.
  subroutine timings()
    double precision :: x(128), y(128), t0, t
    integer :: i
    type(MPI_Request) :: r(2)
    do i = 1, 128
      x(i) = rank + i - 1
    end do
    call MPI_Barrier(MPI_COMM_WORLD)
    t0 = 0
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      if (rank == 0) then
        call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD)
        call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      else if (rank == 1) then
        call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD)
      end if
    end do
    t = (MPI_Wtime() - t0) / 200.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'pingpong 8 B: ', t, ' us'
    call MPI_Barrier(MPI_COMM_WORLD)
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    end do
    t = (MPI_Wtime() - t0) / 100.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'allreduce 8 B: ', t, ' us'
    call MPI_Barrier(MPI_COMM_WORLD)
    do i = 0, 109
      if (i == 10) t0 = MPI_Wtime()
      call MPI_Irecv(y, 128, MPI_DOUBLE_PRECISION, mod(rank + nranks - 1, nranks), 2, &
           MPI_COMM_WORLD, r(1))
      call MPI_Isend(x, 128, MPI_DOUBLE_PRECISION, mod(rank + 1, nranks), 2, MPI_COMM_WORLD, r(2))
      call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
    end do
    t = (MPI_Wtime() - t0) / 100.0d0 * 1.0d6
    if (rank == 0) print '(A,F0.6,A)', 'ring 1 KiB: ', t, ' us'
  end subroutine timings

  subroutine calls()
    integer :: i, n, mine, cnt, idx, s, r, ierr
    ! buffers of nonblocking calls (volatile: see mpi_fortran_h.f90)
    integer, volatile :: total, ibuf(30), got(30)
    type(MPI_Status) :: st
    type(MPI_Request) :: req, reqs(2)
    type(MPI_Comm) :: sub, dup
    type(MPI_Group) :: world_group, first
    logical :: flag
    n = nranks
    mine = rank + 1
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total == n * (n + 1) / 2 .and. ierr == MPI_SUCCESS, 'Allreduce')
    mine = rank
    call MPI_Allreduce(MPI_IN_PLACE, mine, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(mine == n - 1, 'Allreduce MPI_IN_PLACE')
    ibuf = 0
    if (rank == n - 1) ibuf = [(7 * i, i = 1, 30)]
    call MPI_Bcast(ibuf, 30, MPI_INTEGER, n - 1, MPI_COMM_WORLD)
    call check(all(ibuf == [(7 * i, i = 1, 30)]), 'Bcast')
    ! Sendrecv round the ring, its type(MPI_Status)
    ibuf = [(rank * 100 + i, i = 1, 30)]
    call MPI_Sendrecv(ibuf, 30, MPI_INTEGER, mod(rank + 1, n), 5, got, 30, MPI_INTEGER, &
         MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, MPI_INTEGER, cnt)
    call check(st%MPI_SOURCE == mod(rank + n - 1, n) .and. st%MPI_TAG == 5 .and. cnt == 30, &
         'Sendrecv status')
    call check(all(got == [(mod(rank + n - 1, n) * 100 + i, i = 1, 30)]), 'Sendrecv data')
    ! Iprobe and Test (LOGICAL arguments: the f08 library calls pmpi_iprobe_, pmpi_test_)
    if (rank == 0) then
      call MPI_Send(ibuf, 11, MPI_INTEGER, 1, 31, MPI_COMM_WORLD)
    else if (rank == 1) then
      flag = .false.
      do while (.not. flag)
        call MPI_Iprobe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, flag, st)
      end do
      call MPI_Get_count(st, MPI_INTEGER, cnt)
      call check(cnt == 11 .and. st%MPI_SOURCE == 0, 'Iprobe status')
      call MPI_Irecv(got, 30, MPI_INTEGER, 0, 31, MPI_COMM_WORLD, req)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(req, flag, MPI_STATUS_IGNORE)
      end do
      call check(req == MPI_REQUEST_NULL .and. all(got(1:11) == [(i, i = 1, 11)]), 'Test')
    end if
    ! Waitany over a ring exchange; Waitall with MPI_STATUSES_IGNORE
    call MPI_Irecv(got, 30, MPI_INTEGER, mod(rank + n - 1, n), 6, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(ibuf, 30, MPI_INTEGER, mod(rank + 1, n), 6, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitany(2, reqs, idx, st)
    call check(idx == 1 .or. idx == 2, 'Waitany index is 1-based')
    call check(reqs(idx) == MPI_REQUEST_NULL, 'Waitany frees the request')
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    call check(all(got == [(mod(rank + n - 1, n) * 100 + i, i = 1, 30)]), 'Waitany data')
    ! a receive nothing matches, cancelled
    call MPI_Irecv(got, 30, MPI_INTEGER, MPI_ANY_SOURCE, 777, MPI_COMM_WORLD, req)
    call MPI_Cancel(req)
    call MPI_Wait(req, st)
    call MPI_Test_cancelled(st, flag)
    call check(flag, 'Cancel of a posted receive')
    ! a split, dup, groups, a nonblocking collective
    call MPI_Comm_split(MPI_COMM_WORLD, merge(0, 1, rank == 0), rank, sub)
    call MPI_Comm_size(sub, s)
    call check(s == merge(1, n - 1, rank == 0), 'Comm_split size')
    call MPI_Comm_dup(sub, dup)
    mine = rank
    call MPI_Iallreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, dup, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(total == merge(0, n * (n - 1) / 2, rank == 0), 'Iallreduce on a dup')
    call MPI_Comm_free(dup)
    call MPI_Comm_free(sub)
    call check(sub == MPI_COMM_NULL, 'Comm_free')
    call MPI_Comm_group(MPI_COMM_WORLD, world_group)
    call MPI_Group_incl(world_group, 1, [n - 1], first)
    call MPI_Group_rank(first, r)
    call check(r == merge(0, MPI_UNDEFINED, rank == n - 1), 'Group_incl rank')
    call MPI_Group_free(first)
    call MPI_Group_free(world_group)
    call check(first == MPI_GROUP_NULL, 'Group_free')
  end subroutine calls

  subroutine unmodelled()
    type(MPI_File) :: fh
    call MPI_File_open(MPI_COMM_WORLD, "p2mpi.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, fh)
    print '(A,I0,A)', 'rank ', rank, ': MPI_File_open returned'
  end subroutine unmodelled
end program mpi_fortran_f08
