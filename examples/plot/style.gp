# The look every figure of examples/plot/ shares; each script loads it after `out` is set:
#   dir_of(path) = strstrt(path, '/') == 0 ? '' : path[:strstrt(path, '/')] . dir_of(path[strstrt(path, '/') + 1:])
#   load dir_of(ARG0).'style.gp'
#   eval terminal(1400, 640, 12, 1.5)   # width, height, font size, line width; and set output out
# The C++ side (examples/plot.hpp, draw_figure) runs a script twice, with out = NAME.png and
# out = NAME.svg; `terminal` picks pngcairo or svg from the extension of `out`.

# One colour per memory, the same in every figure. A frame stack is a concatenated window (the m
# newest one-hot observations side by side), so both are drawn in one colour.
c_trace = '#1f77b4'       # memory trace
c_trace2 = '#17becf'      # a second memory trace (another λ) in the same figure
c_trace_norm = '#6a3d9a'  # memory traces whose features an agent normalises (ppo_tmaze's +norm)
c_trace2_norm = '#b15928' # the second trace, normalised
c_window = '#d62728'      # full window (one table entry per window)
c_concat = '#2ca02c'      # concatenated window
c_frame_stack = c_concat  # frame stack
c_memoryless = '#7f7f7f'  # no memory
c_gru = '#ff7f0e'         # a recurrent network's learned memory (GRU of 64)
c_gru_small = '#e377c2'   # a GRU of 32
c_gru_large = '#8c564b'   # a GRU of 128
c_reference = '#444444'   # a number tied to no one memory (a ceiling, a ratio)
c_grid = '#dddddd'
c_band_note = '#555555'   # notes on bands and clipped curves

# What a line shows, the same dash in every figure and for every memory: TD's (or PPO's) learned
# result solid with points, the exact optimum dashed, the exact TD fixed point dotted, a proved
# bound or a reference level (the best trace, in the windows panel) dash-dotted.
dt_learned = 1
dt_optimal = 2
dt_fixed_point = 3
dt_bound = 4

is_svg = strlen(out) > 4 && out[strlen(out) - 3:] eq '.svg'
terminal(w, h, size, lw) = is_svg \
  ? sprintf("set terminal svg size %d,%d dynamic enhanced font 'DejaVu Sans,%d' linewidth %g background rgb 'white'; set output out", w, h, size, lw) \
  : sprintf("set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,%d' linewidth %g; set output out", w, h, size, lw)
