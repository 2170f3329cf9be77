"""An mpi4py program as users write one (Debian's python3-mpi4py, started
with plain `p2run -n N -- python3 mpi4py_ring.py`): every rank must be a rank
of the job, not an Open MPI singleton. A ring exchange, an allreduce, a
broadcast and a gather, each checked, and the simulated time MPI.Wtime
gives."""
import os

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
t0 = MPI.Wtime()
right, left = (rank + 1) % size, (rank - 1) % size
got = comm.sendrecv(("from", rank, list(range(rank * 100))), dest=right, source=left)
ok = got == ("from", left, list(range(left * 100)))
ok &= comm.allreduce(rank + 1) == size * (size + 1) // 2
ok &= comm.bcast({"root": "data"} if rank == 0 else None, root=0) == {"root": "data"}
gathered = comm.gather(rank * rank, root=0)
ok &= rank != 0 or gathered == [r * r for r in range(size)]
comm.Barrier()
elapsed = MPI.Wtime() - t0
# One write per line: the ranks share the job's output.
os.write(1, f"rank {rank} of {size}: {'ok' if ok else 'WRONG'}, "
            f"simulated {elapsed * 1e6:.3f} us\n".encode())
if not ok:
    raise SystemExit(1)
