# Silent hangs: calls that used to block forever must end (or be reported)
# within seconds, naming the ranks and the calls.  sdsmrun's own --timeout
# is only the backstop of a broken runtime.
add_executable(mp_hang hang.c)
target_link_libraries(mp_hang PRIVATE sdsm)
# mp_hang_test(NAME N EXPECT-OPTIONS... -- SCENARIO [ARGS...])
function(mp_hang_test name n)
  list(FIND ARGN "--" sep)
  list(SUBLIST ARGN 0 ${sep} opts)
  math(EXPR first "${sep} + 1")
  list(SUBLIST ARGN ${first} -1 args)
  sdsm_mp_test(NAME mp_hang_${name}_${n} RANKS ${n} LIMIT 20 TIMEOUT 40
    EXPECT ${opts} --max-seconds 10 --no-leftovers COMMAND $<TARGET_FILE:mp_hang> ${args})
endfunction()
set(HANG_MISMATCH --nonzero --expect "collective mismatch: rank [0-9]+ is in " --reject "OK hang"
  --reject "time limit")
# What each scenario's report names besides the mismatch (the tree barrier's
# tests below expect the same).
set(e_partial_barrier --expect "mismatch: .*sdsm_finalize\\(\\)")
set(e_partial_alloc --expect "mismatch: .*sdsm_alloc\\(size [0-9]+, home 0\\)"
  --expect "mismatch: .*sdsm_finalize\\(\\)")
set(e_barrier_alloc --expect "mismatch: .*sdsm_alloc\\(size" --expect "mismatch: .*sdsm_barrier\\(\\)")
set(e_barrier_at --expect "mismatch: .*sdsm_barrier_at\\(0\\)" --expect "mismatch: .*sdsm_barrier_at\\(1\\)")
set(e_bcast_root --expect "mismatch: .*sdsm_bcast\\(.*root 0\\)" --expect "mismatch: .*sdsm_bcast\\(.*root 1\\)")
# A partial barrier's report also names the barrier rank 0 is in.
set(HANG_RANK0 --expect "rank 0[^0-9].*sdsm_barrier|sdsm_barrier.*rank 0[^0-9]")
foreach(n 2 4)
  mp_hang_test(partial_barrier ${n} ${HANG_MISMATCH} ${HANG_RANK0} ${e_partial_barrier} -- partial_barrier)
  mp_hang_test(partial_alloc ${n} ${HANG_MISMATCH} ${e_partial_alloc} -- partial_alloc)
  foreach(s barrier_alloc barrier_at bcast_root)
    mp_hang_test(${s} ${n} ${HANG_MISMATCH} ${e_${s}} -- ${s})
  endforeach()
  mp_hang_test(lock_finalize ${n} --nonzero --reject "OK hang" --reject "time limit"
    --expect "rank 1[^0-9].*sdsm_finalize: lock 5 still held by this rank" -- lock_finalize)
  # The same with one copy of the memory for the host, whose barrier meets
  # in shared memory (sync/hostbar.c): the last arrival compares the calls,
  # and a rank left waiting tells rank 0 its call.
  mp_hang_test(partial_barrier_host ${n} ${HANG_MISMATCH} ${HANG_RANK0} ${e_partial_barrier} -- partial_barrier)
  foreach(s barrier_alloc barrier_at bcast_root)
    mp_hang_test(${s}_host ${n} ${HANG_MISMATCH} ${e_${s}} -- ${s})
  endforeach()
  # A lock in the host's table is known held from the table (its holding
  # rank), not from a list of this rank's: still reported at finalize.
  mp_hang_test(lock_finalize_host ${n} --nonzero --reject "OK hang" --reject "time limit"
    --expect "rank 1[^0-9].*sdsm_finalize: lock 5 still held by this rank" -- lock_finalize)
  set_property(TEST mp_hang_partial_barrier_host_${n} mp_hang_barrier_alloc_host_${n}
    mp_hang_barrier_at_host_${n} mp_hang_bcast_root_host_${n} mp_hang_lock_finalize_host_${n} APPEND PROPERTY
    ENVIRONMENT SDSM_HOST_SHARE=1)
endforeach()

# SDSM_HANG_REPORT: rank 1 holds lock 3 for 5 s while the others wait for it;
# each second rank 0 prints what every rank is doing, and the job still ends well.
# (5 s: two reports arrive in time even when a loaded machine delays them.)
# The same with one copy of the memory, whose locks are in the host's table.
foreach(v "stuck_report|SDSM_HANG_REPORT=1" "stuck_report_host|SDSM_HANG_REPORT=1;SDSM_HOST_SHARE=1")
  string(REPLACE "|" ";" v "${v}")
  list(POP_FRONT v name)
  mp_hang_test(${name} 4 --status 0 --expect "^OK hang_stuck$"
    --expect "hang report 1: rank 1: .*running, in no blocking sdsm call. holds lock 3"
    --expect "hang report 1: rank 0: .*waiting [0-9.]+ s in sdsm_lock\\(3\\)"
    --expect "hang report 1: rank [0-9]: .*manages lock 3: held by rank 1, wanted by ranks [0-9, ]+"
    --expect "hang report 2: " -- stuck 5000)
  set_tests_properties(mp_hang_${name}_4 PROPERTIES ENVIRONMENT "${v}")
endforeach()
mp_hang_test(stuck_quiet 2 --status 0 --expect "^OK hang_stuck$" --reject "hang report" -- stuck 1500)
set_tests_properties(mp_hang_stuck_quiet_2 PROPERTIES ENVIRONMENT "SDSM_HANG_REPORT=0")

# Waits for threads that compute are no hang.  The main threads wait in
# sdsm_thread_join (as an OpenMP program's do all along) while 2 compute
# threads per rank compute 3.5 s without a runtime call: every rank notes
# its join each second, but threads compute, so no report is printed
# (every run longer than SDSM_HANG_REPORT printed one).
mp_hang_test(compute_quiet 2 --status 0 --expect "^OK hang_compute$" --reject "hang report"
  -- compute 3500)
set_tests_properties(mp_hang_compute_quiet_2 PROPERTIES
  ENVIRONMENT "SDSM_HANG_REPORT=1;SDSM_THREADS=2;SDSM_LOG=debug")
# ...but when nobody computes, a join and the waits it is for are reported:
# thread 0 of rank 1 holds lock 3 and sleeps 5 s, every other thread waits for it.
# (Any report: under load the threads may reach the lock after the first.
# SDSM_LOG=debug says why a round printed nothing.)
mp_hang_test(threads_stuck_report 2 --status 0 --expect "^OK hang_threads_stuck$"
  --expect "hang report [0-9]+: rank 0: .*main thread waiting [0-9.]+ s in sdsm_thread_join"
  --expect "hang report [0-9]+: rank 0: .*thread [01] waiting [0-9.]+ s in sdsm_lock\\(3\\)"
  --expect "hang report [0-9]+: rank 1: .*thread 3 waiting [0-9.]+ s in sdsm_lock\\(3\\)"
  -- threads_stuck 5000)
# (hlrc: under ibec a thread waiting for its rank's critical-section turn
# waits for another thread of the rank, not for the lock; the suites under
# other protocols leave it out.)
set_tests_properties(mp_hang_threads_stuck_report_2 PROPERTIES
  ENVIRONMENT "SDSM_HANG_REPORT=1;SDSM_THREADS=2;SDSM_LOG=debug;SDSM_PROTOCOL=hlrc")
# A thread that computes shows as such in what the ranks answer (here to
# sdsmrun --timeout, as in a hang report), with the time since its last
# runtime call; threads that compute for ever make no hang report.
add_test(NAME mp_hang_compute_timeout_2
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    --expect "sdsmrun: rank 0: .*thread [01] running, no runtime call for [1-9][0-9.]* s"
    --expect "sdsmrun: rank 1: .*thread [23] running, no runtime call for [1-9][0-9.]* s"
    --expect "sdsmrun: rank [01]: .*main thread waiting [0-9.]+ s in sdsm_thread_join"
    --reject "hang report" --reject "OK hang"
    -- ${MP_RUN} -n 2 --threads 2 --timeout 4 $<TARGET_FILE:mp_hang> compute -1)
set_tests_properties(mp_hang_compute_timeout_2 PROPERTIES LABELS mp TIMEOUT 40
  ENVIRONMENT SDSM_HANG_REPORT=1)

# sdsmrun --timeout asks the ranks what they are waiting for before it stops them.
# 4 s leaves every rank time to reach its wait even on a loaded machine.
# What the ranks say of a lock rank 1 holds for ever, and of a barrier it
# does not reach in time: the same with one copy of the memory for the host.
set(HANG_TIMEOUT_LOCK
  --expect "sdsmrun: rank 1: .*running, in no blocking sdsm call. holds lock 3"
  --expect "sdsmrun: rank 0: .*waiting [0-9.]+ s in sdsm_lock\\(3\\)"
  --expect "sdsmrun: rank [0-9]: .*manages lock 3: held by rank 1, wanted by ranks [02], [02]"
  --reject "OK hang")
set(HANG_TIMEOUT_BARRIER
  --expect "sdsmrun: rank 0: .*manages a barrier that 2 of 3 ranks reached. waiting for rank 1$"
  --expect "sdsmrun: rank 1: .*running, in no blocking sdsm call$")
add_test(NAME mp_hang_timeout_3
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    --expect "sdsmrun: time limit of 4 s exceeded. asking the ranks what they are waiting for"
    ${HANG_TIMEOUT_LOCK}
    -- ${MP_RUN} -n 3 --timeout 4 $<TARGET_FILE:mp_hang> forever)
set_tests_properties(mp_hang_timeout_3 PROPERTIES LABELS mp TIMEOUT 40)
add_test(NAME mp_hang_timeout_barrier_3
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    --expect "sdsmrun: rank 0: .*waiting [0-9.]+ s in sdsm_barrier\\(\\) \\(manager 0\\) \\(collective #3\\), for its manager rank 0"
    ${HANG_TIMEOUT_BARRIER}
    -- ${MP_RUN} -n 3 --timeout 4 $<TARGET_FILE:mp_hang> late)
set_tests_properties(mp_hang_timeout_barrier_3 PROPERTIES LABELS mp TIMEOUT 40
  ENVIRONMENT SDSM_BARRIER=central)
# The same two waits with one copy of the memory for the host: the lock and
# the barrier in shared memory say the same.
add_test(NAME mp_hang_timeout_host_3
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    ${HANG_TIMEOUT_LOCK}
    -- ${MP_RUN} -n 3 --timeout 4 $<TARGET_FILE:mp_hang> forever)
add_test(NAME mp_hang_timeout_barrier_host_3
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    ${HANG_TIMEOUT_BARRIER}
    -- ${MP_RUN} -n 3 --timeout 4 $<TARGET_FILE:mp_hang> late)
set_tests_properties(mp_hang_timeout_host_3 mp_hang_timeout_barrier_host_3 PROPERTIES LABELS mp TIMEOUT 40
  ENVIRONMENT SDSM_HOST_SHARE=1)
# The same wait in the tree barrier: rank 0 (the root) names the child it waits for.
add_test(NAME mp_hang_timeout_tree_3
  COMMAND ${MP_EXPECT} --status 124 --max-seconds 14 --no-leftovers
    --expect "sdsmrun: rank 0: .*waiting [0-9.]+ s in sdsm_barrier\\(\\) \\(manager 0\\) \\(collective #3\\), for its manager rank 0"
    --expect "sdsmrun: rank 0: .*in the barrier tree of manager 0, 2 of 3 ranks of its subtree \\(itself and 2 children\\) arrived. waiting for rank 1$"
    --expect "sdsmrun: rank 1: .*running, in no blocking sdsm call$"
    -- ${MP_RUN} -n 3 --timeout 4 $<TARGET_FILE:mp_hang> late)
set_tests_properties(mp_hang_timeout_tree_3 PROPERTIES LABELS mp TIMEOUT 40 ENVIRONMENT SDSM_BARRIER=tree)
# Mismatched collectives in a tree of depth 2: a rank's parent (not the root)
# may be the one that sees the mismatch; the message is the same.
foreach(s partial_barrier barrier_alloc barrier_at)
  mp_hang_test(tree_${s} 8 ${HANG_MISMATCH} ${e_${s}} -- ${s})
  set_tests_properties(mp_hang_tree_${s}_8 PROPERTIES ENVIRONMENT SDSM_BARRIER=tree)
endforeach()
