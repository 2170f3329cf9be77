# The reproductions of the public HA-PACS/TCA programs (workloads/public/):
# each runs a few small sizes under p2run with every element checked; the
# tests assert the exit status, that the data are right (the table's wrong
# column and the CSV's are 0) and the table's and the CSV's shape, not the
# simulated figures (the validation suite compares those with the hardware's,
# workloads/validation/figures.txt). Argument errors exit 2 naming the argument.
if(NOT TARGET pub_pingpong OR NOT TARGET pub_block_stride OR NOT TARGET pub_allgather)
  return()
endif()

set(pub_dir ${CMAKE_BINARY_DIR}/workloads/public)
set(pub_out ${CMAKE_CURRENT_BINARY_DIR}/public)
file(MAKE_DIRECTORY ${pub_out})

# public_test(NAME RANKS n ARGS args... [PARAMS file] [EXIT n] [MATCH re...]
#             [ROW re ROWS n] [CSV file lines row-re])
function(public_test name)
  cmake_parse_arguments(T "" "RANKS;EXIT;ROW;ROWS;PARAMS" "ARGS;MATCH;CSV" ${ARGN})
  set(command $<TARGET_FILE:p2run> --timeout 60 -n ${T_RANKS})
  if(T_PARAMS)
    list(APPEND command --params ${T_PARAMS})
  endif()
  list(APPEND command -- ${T_ARGS})
  set(checks REJECT WRONG rror)
  if(DEFINED T_EXIT)
    list(APPEND checks EXIT ${T_EXIT})
  endif()
  if(T_MATCH)
    list(APPEND checks MATCH ${T_MATCH})
  endif()
  if(DEFINED T_ROW)
    list(APPEND checks ROWS ${T_ROWS} ROW_REGEX ${T_ROW})
  endif()
  if(T_CSV)
    list(GET T_CSV 0 file)
    list(GET T_CSV 1 lines)
    list(GET T_CSV 2 row)
    list(APPEND checks CSV_LINES ${file} ${lines} CSV_ROW ${row})
  endif()
  p2_check_test(workloads.public.${name} COMMAND ${command} ${checks})
  # Label mpi too: the programs start Open MPI, which .ci/sanitize leaves out
  # (its threads meet the runtime's interposer under ASan).
  set_tests_properties(workloads.public.${name} PROPERTIES LABELS "workloads;mpi" TIMEOUT 120
                       ENVIRONMENT "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1")
endfunction()

# Ping-pong, 8 B to 4 KB: 10 rows (bytes iters latency bandwidth wrong = 0).
public_test(pingpong RANKS 2
  ARGS ${pub_dir}/pub_pingpong -b 8 -e 4K -n 4 -w 2 --csv ${pub_out}/pingpong.csv
  MATCH "pub_pingpong: 2 ranks, all data right"
  ROW "\n +[0-9]+ +4 +[0-9.]+ +[0-9.]+ +0" ROWS 10
  CSV ${pub_out}/pingpong.csv 11 "^(8|16|32|64|128|256|512|1024|2048|4096),4,[0-9.]+,[0-9.]+,0$")
# Block-stride, both versions, N = 2 to 16: every element of both cubes.
foreach(variant current first)
  public_test(block_stride_${variant} RANKS 2
    ARGS ${pub_dir}/pub_block_stride --variant ${variant} -b 2 -e 16 -n 3 -w 1
         --csv ${pub_out}/block_stride_${variant}.csv
    MATCH "pub_block_stride: ${variant} version, 2 ranks, all data right"
    ROW "\n +[0-9]+ +[0-9]+ +3 +[0-9.]+ +[0-9.]+ +0" ROWS 4
    CSV ${pub_out}/block_stride_${variant}.csv 5
        "^${variant},(2,32|4,128|8,512|16,2048),3,[0-9.]+,[0-9.]+,0$")
endforeach()
# Allgather on 4 ranks to 1 KB per rank and on 16 (the published job) to 256 B.
public_test(allgather_4 RANKS 4
  ARGS ${pub_dir}/pub_allgather -b 16 -e 1K -n 3 -w 1 --csv ${pub_out}/allgather_4.csv
  MATCH "pub_allgather: 4 ranks, all data right"
  ROW "\n +[0-9]+ +[0-9]+ +3 +[0-9.]+ +0" ROWS 7
  CSV ${pub_out}/allgather_4.csv 8 "^4,(16,2|32,4|64,8|128,16|256,32|512,64|1024,128),3,[0-9.]+,0$")
public_test(allgather_16 RANKS 16
  ARGS ${pub_dir}/pub_allgather -b 16 -e 256 -n 2 -w 1 --csv ${pub_out}/allgather_16.csv
  MATCH "pub_allgather: 16 ranks, all data right"
  ROW "\n +[0-9]+ +[0-9]+ +2 +[0-9.]+ +0" ROWS 5
  CSV ${pub_out}/allgather_16.csv 6 "^16,(16|32|64|128|256),[0-9]+,2,[0-9.]+,0$")
# The same on the 2018 machine (topologies/hapacs-2018.params), where every
# node's GPU reads and writes take turns (gpu_read_flush_ns): the turns must
# hold no byte back and lose none.
public_test(allgather_16_2018 RANKS 16 PARAMS ${P2_SOURCE_DIR}/topologies/hapacs-2018.params
  ARGS ${pub_dir}/pub_allgather -b 16 -e 4K -n 2 -w 1 --csv ${pub_out}/allgather_16_2018.csv
  MATCH "pub_allgather: 16 ranks, all data right"
  ROW "\n +[0-9]+ +[0-9]+ +2 +[0-9.]+ +0" ROWS 9
  CSV ${pub_out}/allgather_16_2018.csv 10 "^16,(16|32|64|128|256|512|1024|2048|4096),[0-9]+,2,[0-9.]+,0$")

# Broadcast on 8 ranks to 1 KB: every rank's copy right.
public_test(bcast_8 RANKS 8
  ARGS ${pub_dir}/pub_bcast -b 8 -e 1K -n 3 -w 1 --csv ${pub_out}/bcast_8.csv
  MATCH "pub_bcast: 8 ranks, all data right"
  ROW "\n +[0-9]+ +3 +[0-9.]+ +0" ROWS 8
  CSV ${pub_out}/bcast_8.csv 9 "^8,(8|16|32|64|128|256|512|1024),3,[0-9.]+,0$")

# Bad arguments: status 2, the argument named.
public_test(args.bad_size RANKS 2 ARGS ${pub_dir}/pub_pingpong -b 12Q EXIT 2
  MATCH "pub_pingpong: -b '12Q' is not a size")
public_test(args.not_doubles RANKS 2 ARGS ${pub_dir}/pub_pingpong -b 12 EXIT 2
  MATCH "pub_pingpong: -b must be a positive multiple of 8 bytes")
public_test(args.ranks RANKS 4 ARGS ${pub_dir}/pub_pingpong EXIT 2
  MATCH "pub_pingpong: runs on 2 ranks")
public_test(args.bad_variant RANKS 2 ARGS ${pub_dir}/pub_block_stride --variant second EXIT 2
  MATCH "pub_block_stride: --variant must be current or first")
public_test(args.bad_iters RANKS 2 ARGS ${pub_dir}/pub_block_stride -n 0 EXIT 2
  MATCH "pub_block_stride: -n '0' is not a positive integer")
public_test(args.allgather_ranks RANKS 3 ARGS ${pub_dir}/pub_allgather EXIT 2
  MATCH "pub_allgather: runs on 2, 4, 8 or 16 ranks")
public_test(args.bcast_ranks RANKS 6 ARGS ${pub_dir}/pub_bcast EXIT 2
  MATCH "pub_bcast: runs on 2, 4, 8 or 16 ranks")
public_test(args.unknown RANKS 16 ARGS ${pub_dir}/pub_allgather -x EXIT 2
  MATCH "pub_allgather: unknown option '-x'")
