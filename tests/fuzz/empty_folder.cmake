# cmake -DDIR=folder -P empty_folder.cmake: removes the folder and creates it empty (the scratch
# folder of a libFuzzer ctest run, so that every run starts alike).
if(NOT DIR)
  message(FATAL_ERROR "empty_folder.cmake: -DDIR=folder is required")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
