! mpi_fortran_rma: one-sided communication through the Fortran bindings
! (`use mpi`), on a window of a Fortran array (MPI_Win_create): every rank
! puts its rank into its slot of every window under fence, gets a
! neighbour's slots back, accumulates into a counter under lock_all with
! MPI_Accumulate (MPI_SUM) and MPI_Fetch_and_op, and one rank takes an
! exclusive lock. Every element is checked; prints
! "mpi_fortran_rma: all N checks passed on P ranks", or names the failed
! check and ends the job with MPI_Abort(2).
program mpi_fortran_rma
  use mpi
  implicit none
  integer, parameter :: nmax = 64
  integer :: ierr, rank, nproc, win, i, checks, one, old, grp
  ! The window's memory changes under the program's feet (MPI-3.1 17.1.17):
  ! VOLATILE keeps the compiler from holding its elements in registers.
  integer, volatile :: buf(nmax + 1)
  integer :: got(nmax)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp

  checks = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  buf = -1
  buf(nmax + 1) = 0
  wsize = 4 * (nmax + 1)
  call MPI_Win_create(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(win /= MPI_WIN_NULL, 'MPI_Win_create gives a window')
  call MPI_Win_get_group(win, grp, ierr)
  call MPI_Group_size(grp, i, ierr)
  call check(i == nproc, 'MPI_Win_get_group')
  call MPI_Group_free(grp, ierr)

  ! Put under fence: slot `rank` of every window gets 100 * rank + target.
  call MPI_Win_fence(0, win, ierr)
  do i = 0, nproc - 1
    one = 100 * rank + i
    disp = rank
    call MPI_Put(one, 1, MPI_INTEGER, i, disp, 1, MPI_INTEGER, win, ierr)
  end do
  call MPI_Win_fence(0, win, ierr)
  do i = 0, nproc - 1
    call check(buf(i + 1) == 100 * i + rank, 'MPI_Put under fence')
  end do

  ! Get the next rank's slots back.
  disp = 0
  call MPI_Get(got, nproc, MPI_INTEGER, mod(rank + 1, nproc), disp, nproc, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  do i = 0, nproc - 1
    call check(got(i + 1) == 100 * i + mod(rank + 1, nproc), 'MPI_Get under fence')
  end do

  ! Accumulate and Fetch_and_op into rank 0's counter under lock_all.
  call MPI_Win_lock_all(0, win, ierr)
  one = rank + 1
  disp = nmax
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_flush(0, win, ierr)
  one = 1000
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, disp, MPI_SUM, win, ierr)
  call MPI_Win_flush_all(win, ierr)
  call check(old >= rank + 1, 'MPI_Fetch_and_op returns an earlier value')
  call MPI_Win_unlock_all(win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    call MPI_Win_sync(win, ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(buf(nmax + 1) == nproc * (nproc + 1) / 2 + 1000 * nproc, &
               'MPI_Accumulate and MPI_Fetch_and_op sum')
  end if
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_Win_free sets MPI_WIN_NULL')
  call MPI_Reduce(checks, i, 1, MPI_INTEGER, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A,I0,A,I0,A)', 'mpi_fortran_rma: all ', i, ' checks passed on ', nproc, ' ranks'
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,A,A)', 'rank ', rank, ': FAILED: ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    checks = checks + 1
  end subroutine check
end program mpi_fortran_rma
