! mpi_fortran_mod: the Fortran MPI bindings of the virtual-time MPI layer
! through `use mpi` (Open MPI's module resolves to the mpi_*_ names; mpif90,
! MPI::MPI_Fortran; run by p2run). Rank 0 prints the timing section of
! mpi_fortran_ref.c (mpi_cases.sh checks the simulated times equal the C
! ones), then the data of Allreduce (and MPI_IN_PLACE), Bcast, Send/Recv
! with a status, Isend/Irecv with Waitall, Iprobe, Test, Comm_split and an
! Iallreduce on it are checked element by element.
! With the argument "unmodelled" it then calls MPI_File_open (MPI-IO), which
! the layer does not model: the job must stop naming it.
! Prints "mpi_fortran_mod: all N checks passed on P ranks"; a failed check
! names itself and ends the job with MPI_Abort(2).
program mpi_fortran_mod
  use mpi
  implicit none
  integer :: ierr, rank, nranks, checks
  character(len=32) :: arg
  checks = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call timings()
  call calls()
  if (rank == 0) print '(A,I0,A,I0,A)', 'mpi_fortran_mod: all ', checks, ' checks passed on ', &
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
    double precision :: x(128), y(128), t0, t
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
  end subroutine timings

  subroutine calls()
    integer :: i, n, mine(1), st(MPI_STATUS_SIZE), r(2), sub, s, req
    integer :: sts(MPI_STATUS_SIZE, 2)
    ! buffers of nonblocking calls (volatile: see mpi_fortran_h.f90)
    integer, volatile :: total(1), ibuf(40), got(40)
    logical :: flag
    n = nranks
    mine(1) = rank + 1
    call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(total(1) == n * (n + 1) / 2, 'Allreduce')
    mine(1) = rank
    call MPI_Allreduce(MPI_IN_PLACE, mine, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(mine(1) == n - 1, 'Allreduce MPI_IN_PLACE')
    ibuf = 0
    if (rank == 0) ibuf = [(i * i, i = 1, 40)]
    call MPI_Bcast(ibuf, 40, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check(all(ibuf == [(i * i, i = 1, 40)]), 'Bcast')
    ! Send/Recv with a status, Iprobe, Test
    if (rank == 0) then
      call MPI_Send(ibuf, 13, MPI_INTEGER, 1, 21, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      flag = .false.
      do while (.not. flag)
        call MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, flag, st, ierr)
      end do
      call check(st(MPI_TAG) == 21, 'Iprobe status')
      got = 0
      call MPI_Irecv(got, 40, MPI_INTEGER, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, req, ierr)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(req, flag, st, ierr)
      end do
      call MPI_Get_count(st, MPI_INTEGER, i, ierr)
      call check(i == 13 .and. st(MPI_SOURCE) == 0 .and. req == MPI_REQUEST_NULL, 'Test status')
      call check(all(got(1:13) == ibuf(1:13)) .and. got(14) == 0, 'Irecv data')
    end if
    ! a ring of Isend/Irecv, Waitall with statuses
    ibuf = [(rank * 100 + i, i = 1, 40)]
    call MPI_Irecv(got, 40, MPI_INTEGER, mod(rank + n - 1, n), 22, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Isend(ibuf, 40, MPI_INTEGER, mod(rank + 1, n), 22, MPI_COMM_WORLD, r(2), ierr)
    call MPI_Waitall(2, r, sts, ierr)
    call check(sts(MPI_SOURCE, 1) == mod(rank + n - 1, n), 'Waitall status')
    call check(all(got == [(mod(rank + n - 1, n) * 100 + i, i = 1, 40)]), 'ring data')
    ! a split and a nonblocking collective on it
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
    call MPI_Comm_size(sub, s, ierr)
    mine(1) = 1
    call MPI_Iallreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, sub, req, ierr)
    call MPI_Wait(req, st, ierr)
    call check(total(1) == s .and. s == (n + 1 - mod(rank, 2)) / 2, 'Iallreduce on a split')
    call MPI_Comm_free(sub, ierr)
    call check(sub == MPI_COMM_NULL, 'Comm_free')
  end subroutine calls

  subroutine unmodelled()
    integer :: fh
    call MPI_File_open(MPI_COMM_WORLD, "p2mpi.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    print '(A,I0,A)', 'rank ', rank, ': MPI_File_open returned'
  end subroutine unmodelled
end program mpi_fortran_mod
