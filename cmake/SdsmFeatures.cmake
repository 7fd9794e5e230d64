# What this build can do beyond the core, found at configure time, and one
# summary of it at the end of the configure step (sdsm_feature_summary).
#
# PMIx is the one feature that changes the library itself: without it,
# direct launch by mpirun or srun --mpi=pmix is compiled out.  pkg-config
# looks for it again at every configure while it is missing, but nothing
# made a configure happen when it was installed later: so the directories
# pkg-config searches are made configure dependencies, and the first build
# after a package puts a .pc file there configures again and finds it.

# pkg-config's search path as the configure step sees it: PKG_CONFIG_PATH,
# then PKG_CONFIG_LIBDIR or, without it, the path pkg-config was built with.
function(sdsm_pkgconfig_dirs out)
  set(dirs)
  if(DEFINED ENV{PKG_CONFIG_PATH})
    string(REPLACE ":" ";" p "$ENV{PKG_CONFIG_PATH}")
    list(APPEND dirs ${p})
  endif()
  if(DEFINED ENV{PKG_CONFIG_LIBDIR})
    string(REPLACE ":" ";" p "$ENV{PKG_CONFIG_LIBDIR}")
    list(APPEND dirs ${p})
  elseif(PKG_CONFIG_EXECUTABLE)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --variable pc_path pkg-config
      OUTPUT_VARIABLE p OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE ":" ";" p "${p}")
    list(APPEND dirs ${p})
  endif()
  set(existing)
  foreach(d IN LISTS dirs)
    if(IS_DIRECTORY "${d}")
      list(APPEND existing "${d}")
    endif()
  endforeach()
  set(${out} ${existing} PARENT_SCOPE)
endfunction()

# Sets SDSM_HAVE_PMIX, and PkgConfig::PMIX when found.
macro(sdsm_find_pmix)
  set(SDSM_HAVE_PMIX OFF)
  set(SDSM_PMIX_NOTE "")
  if(NOT SDSM_PMIX)
    set(SDSM_PMIX_NOTE "off (-DSDSM_PMIX=OFF)")
  else()
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(PMIX QUIET IMPORTED_TARGET pmix)
    endif()
    if(PMIX_FOUND)
      set(SDSM_HAVE_PMIX ON)
      set(SDSM_PMIX_NOTE "yes, PMIx ${PMIX_VERSION}")
    elseif(NOT PKG_CONFIG_FOUND)
      string(CONCAT SDSM_PMIX_NOTE "no: pkg-config is not installed, so PMIx cannot be found. "
        "Install pkg-config and the PMIx development files (Debian, Ubuntu: pkg-config "
        "libpmix-dev. Fedora: pkgconf pmix-devel), then configure again")
    else()
      string(CONCAT SDSM_PMIX_NOTE "no: pkg-config finds no pmix. Install the PMIx development "
        "files (Debian, Ubuntu: libpmix-dev. Fedora: pmix-devel) and build again: the next "
        "build notices them and configures again")
      sdsm_pkgconfig_dirs(_sdsm_pc_dirs)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_sdsm_pc_dirs})
    endif()
  endif()
endmacro()

# matplotlib for sdsm-report's figures: only said, nothing is built with it.
function(sdsm_have_matplotlib out)
  set(${out} "no: sdsm-report --no-figures works without it; install python3-matplotlib for the figures" PARENT_SCOPE)
  find_program(SDSM_PYTHON3 python3)
  if(SDSM_PYTHON3)
    execute_process(COMMAND ${SDSM_PYTHON3} -c "import matplotlib"
      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(${out} "yes" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# The summary: one line per feature, and how to get what is missing.
function(sdsm_feature_summary)
  find_package(OpenMP QUIET)
  find_package(MPI COMPONENTS C QUIET)
  sdsm_have_matplotlib(mpl)
  if(OpenMP_C_FOUND)
    set(omp "yes")
  else()
    set(omp "no: the applications' and tests' OpenMP reference builds are left out (sdsmcc works without)")
  endif()
  if(MPI_C_FOUND)
    set(mpi "yes")
  else()
    set(mpi "no: the applications' MPI versions are left out (install libopenmpi-dev or libmpich-dev)")
  endif()
  if(BUILD_TESTING)
    set(tests "yes (-DBUILD_TESTING=OFF leaves them out)")
  else()
    set(tests "no (-DBUILD_TESTING=OFF)")
  endif()
  message(STATUS "sdsm ${PROJECT_VERSION} features:")
  message(STATUS "  direct launch, PMIx (mpirun, srun --mpi=pmix): ${SDSM_PMIX_NOTE}")
  message(STATUS "  direct launch, PMI-2 (srun --mpi=pmi2, mpiexec.hydra): yes, built in")
  message(STATUS "  OpenMP in the system compiler: ${omp}")
  message(STATUS "  MPI: ${mpi}")
  message(STATUS "  matplotlib (sdsm-report's figures): ${mpl}")
  message(STATUS "  tests: ${tests}")
  message(STATUS "  install prefix: ${CMAKE_INSTALL_PREFIX} (make install PREFIX=... or cmake --install --prefix)")
endfunction()
