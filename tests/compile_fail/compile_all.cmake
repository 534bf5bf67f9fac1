# Compiles SOURCE with COMMAND (its arguments separated by |), writes what the compiler printed to
# OUTPUT, and fails unless the compile failed: every case in SOURCE must be refused
# (tests/CMakeLists.txt, "Compile-time parameters ...").
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} ${SOURCE} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(WRITE ${OUTPUT} "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled with every case defined: a case that must be refused was accepted")
endif()
message(STATUS "${SOURCE}: refused as expected (the cases' tests read ${OUTPUT})")
