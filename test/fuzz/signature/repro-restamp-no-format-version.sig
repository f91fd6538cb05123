signer require
{
 "bound_shapes": [],
 "bounds": [],
 "compiler": "attn-compile fuzz",
 "format_v%rsion": 5,
 "kernels": [
  [
   0,
   "YbCAEMfbdbGZc05VJva0eAh6kuWLQ2zmIU8ecniDWy0",
   null,
   "./m::k",
   "kernels/k.spv"
  ]
 ],
 "kinds": [
  [
   "spirv",
   "main",
   {
    "subgroup_size": 8
   },
   ""
  ]
 ],
 "manifest_hash": "restamp",
 "plans": [],
 "variants": [
  {
   "entries": [
    [
     0,
     "06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",
     null,
     [],
     [
      0
     ]
    ]
   ],
   "name": "merge_states.h4.d32.f32",
   "parameters": {
    "num_heads": "8",
    "op": "merge_states"
   }
  }
 ]
}